"""The medlens version, in the lowest layer so that the run store and provenance can name it."""

__version__ = "0.1.0"
