"""Gradio widget of the bio_vqa_c4 metric (the Space's entry point)."""

from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load(str(Path(__file__).with_name("bio_vqa_c4.py")))
launch_gradio_widget(module)
