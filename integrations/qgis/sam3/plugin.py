"""Registers the provider when QGIS initialises Processing (also under qgis_process)."""
from qgis.core import QgsApplication

from .provider import Sam3Provider


class Sam3Plugin:
    def __init__(self):
        self.provider = None

    def initProcessing(self):  # noqa: N802 (QGIS's name)
        self.provider = Sam3Provider()
        QgsApplication.processingRegistry().addProvider(self.provider)

    def initGui(self):  # noqa: N802
        self.initProcessing()

    def unload(self):
        if self.provider is not None:
            QgsApplication.processingRegistry().removeProvider(self.provider)
            self.provider = None
