"""Photo answerability (seed 000 §3.1): GQA scene graphs and programs, COCO adapter, object-box masks, residual cues."""
