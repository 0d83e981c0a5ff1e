"""sam3:segmentraster: every instance of each prompt in a raster, as polygons in the raster's CRS.

It runs `sam3 label RASTER --format gpkg` (the sam3 program: the library's own map labeler, with
its tiling, seam merging and nodata handling) into a temporary folder, reading its progress, and
copies the features into the algorithm's output with `prompt`, `score`, `area_m2`, `area`,
`source` and `tile` attributes. The program, not the Python module, because QGIS brings its own
Python (on Windows and macOS too), which the compiled module would have to match; the program
works with any QGIS, and it is what labels maps in the library today.
"""
from qgis.core import (
    QgsFeature,
    QgsFeatureSink,
    QgsField,
    QgsFields,
    QgsProcessing,
    QgsProcessingAlgorithm,
    QgsProcessingException,
    QgsProcessingParameterFeatureSink,
    QgsProcessingParameterFile,
    QgsProcessingParameterNumber,
    QgsProcessingParameterRasterLayer,
    QgsProcessingParameterString,
    QgsProcessingUtils,
    QgsVectorLayer,
    QgsWkbTypes,
)
from qgis.PyQt.QtCore import QVariant

from .sam3_program import Sam3Program

PROMPT_SEPARATORS = ","


def split_prompts(text):
    prompts = []
    for part in (text or "").split(PROMPT_SEPARATORS):
        part = part.strip()
        if part and part not in prompts:
            prompts.append(part)
    return prompts


class SegmentRaster(QgsProcessingAlgorithm):
    INPUT, PROMPTS, MODELS, THRESHOLD = "INPUT", "PROMPTS", "MODELS", "THRESHOLD"
    TILE, OVERLAP, BANDS, SCALE, GSD, SAM3, OUTPUT = "TILE", "OVERLAP", "BANDS", "SCALE", "GSD", "SAM3", "OUTPUT"

    def name(self):
        return "segmentraster"

    def displayName(self):  # noqa: N802
        return "Segment raster by prompts"

    def shortHelpString(self):  # noqa: N802
        return ("Finds every instance of each prompt (a word or short phrase: building, swimming pool, "
                "tree) in a raster with SAM3 and writes them as polygons in the raster's CRS, with the "
                "prompt, score and area in square metres. Large rasters are read tile by tile; tiles "
                "without data are skipped. Needs the sam3 program and a SAM3 model folder (sam3 pull).")

    def createInstance(self):  # noqa: N802
        return SegmentRaster()

    def initAlgorithm(self, config=None):  # noqa: N802
        self.addParameter(QgsProcessingParameterRasterLayer(self.INPUT, "Raster"))
        self.addParameter(QgsProcessingParameterString(self.PROMPTS, "Prompts (comma-separated)"))
        self.addParameter(QgsProcessingParameterFile(
            self.MODELS, "Model folder (empty: the default model sam3 pull downloaded)",
            behavior=QgsProcessingParameterFile.Folder, optional=True))
        self.addParameter(QgsProcessingParameterNumber(
            self.THRESHOLD, "Score threshold", QgsProcessingParameterNumber.Double, 0.5, minValue=0.0, maxValue=1.0))
        self.addParameter(QgsProcessingParameterNumber(
            self.TILE, "Tile size in pixels (0: the model's input size)", QgsProcessingParameterNumber.Integer, 0,
            minValue=0, maxValue=100000))
        self.addParameter(QgsProcessingParameterNumber(
            self.OVERLAP, "Tile overlap in pixels (-1: an eighth of the tile)", QgsProcessingParameterNumber.Integer, -1,
            minValue=-1, maxValue=100000))
        self.addParameter(QgsProcessingParameterString(
            self.BANDS, "Bands as red,green,blue or one band (empty: the first three)", optional=True))
        self.addParameter(QgsProcessingParameterString(
            self.SCALE, "Band values to 8 bits: auto, minmax, percentile:2,98 or MIN,MAX (empty: auto)", optional=True))
        self.addParameter(QgsProcessingParameterNumber(
            self.GSD, "Resample to this ground sample distance in metres first (0: as it is; at most 16 times finer than the raster's own)",
            QgsProcessingParameterNumber.Double, 0.0, minValue=0.0))
        self.addParameter(QgsProcessingParameterString(
            self.SAM3, "sam3 program (empty: the SAM3_CLI environment variable, else sam3 on PATH)", optional=True))
        self.addParameter(QgsProcessingParameterFeatureSink(
            self.OUTPUT, "Segments", QgsProcessing.TypeVectorPolygon))

    def processAlgorithm(self, parameters, context, feedback):  # noqa: N802
        raster = self.parameterAsRasterLayer(parameters, self.INPUT, context)
        if raster is None or not raster.isValid():
            raise QgsProcessingException("the raster cannot be read: " + str(parameters.get(self.INPUT)))
        prompts = split_prompts(self.parameterAsString(parameters, self.PROMPTS, context))
        if not prompts:
            raise QgsProcessingException("give at least one prompt, e.g. building, tree")
        program = Sam3Program(self.parameterAsString(parameters, self.SAM3, context).strip())
        out_dir = QgsProcessingUtils.generateTempFilename("sam3-label")
        args = ["label", raster.source(), "--format", "gpkg", "--out", out_dir,
                "--threshold", repr(self.parameterAsDouble(parameters, self.THRESHOLD, context))]
        for prompt in prompts:
            args += ["--prompt", prompt]
        models = self.parameterAsFile(parameters, self.MODELS, context)
        args += ["--models", models] if models else ["--offline"]  # never a surprise download inside QGIS
        tile = self.parameterAsInt(parameters, self.TILE, context)
        if tile > 0:
            args += ["--tile", str(tile)]
        overlap = self.parameterAsInt(parameters, self.OVERLAP, context)
        if overlap >= 0:
            args += ["--overlap", str(overlap)]
        for option, key in (("--bands", self.BANDS), ("--scale", self.SCALE)):
            value = self.parameterAsString(parameters, key, context).strip()
            if value:
                args += [option, value]
        gsd = self.parameterAsDouble(parameters, self.GSD, context)
        if gsd > 0:
            args += ["--gsd", repr(gsd)]
        program.run(args, feedback)

        fields = QgsFields()
        for name, kind in (("prompt", QVariant.String), ("score", QVariant.Double), ("area_m2", QVariant.Double),
                           ("area", QVariant.Double), ("source", QVariant.String), ("tile", QVariant.Int)):
            fields.append(QgsField(name, kind))
        (sink, dest_id) = self.parameterAsSink(parameters, self.OUTPUT, context, fields,
                                               QgsWkbTypes.MultiPolygon, raster.crs())
        if sink is None:
            raise QgsProcessingException(self.invalidSinkError(parameters, self.OUTPUT))
        gpkg = out_dir + "/labels.gpkg"
        for prompt in prompts:
            layer = QgsVectorLayer(gpkg + "|layername=" + prompt, prompt, "ogr")
            if not layer.isValid():
                raise QgsProcessingException("sam3 wrote no layer for \"" + prompt + "\" in " + gpkg)
            for found in layer.getFeatures():
                feature = QgsFeature(fields)
                feature.setGeometry(found.geometry())
                feature.setAttributes([prompt, found["score"], found["area_m2"], found["area"], found["source"],
                                       found["tile"]])
                sink.addFeature(feature, QgsFeatureSink.FastInsert)
        return {self.OUTPUT: dest_id}
