"""TokenPrism applications: the command line (``cli``) and the Qt desktop
app. Only this package imports Qt."""
