"""The window's logic without Qt: what the views show (token analysis,
alignment of two models' tokens, piece labels, finding text), computed
from core objects and tested without a display. Nothing here imports Qt."""
