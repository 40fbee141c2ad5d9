"""CLEVR scene answerability suite: real CLEVR scene graphs, programs, renderer and certified edits (seed 000, §3.1)."""
