"""The "sam3" Processing provider."""
from qgis.core import QgsProcessingProvider

from .segment_raster import SegmentRaster


class Sam3Provider(QgsProcessingProvider):
    def id(self):
        return "sam3"

    def name(self):
        return "SAM3 (sam3cpp)"

    def longName(self):  # noqa: N802
        return "SAM3: segment rasters by a word (sam3cpp)"

    def loadAlgorithms(self):  # noqa: N802
        self.addAlgorithm(SegmentRaster())
