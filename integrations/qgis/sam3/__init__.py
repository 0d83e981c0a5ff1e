"""QGIS plugin entry point: sam3's Processing provider (id "sam3")."""


def classFactory(iface):  # noqa: N802 (QGIS's name)
    from .plugin import Sam3Plugin
    return Sam3Plugin()
