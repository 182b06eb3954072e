"""The desktop app's Qt widgets: the main window and its parts (``qt_*``),
each receiving core objects and the Qt-free logic of ``app.logic``."""
