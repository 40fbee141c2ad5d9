"""Photo answerability (issue 7): GQA scene graphs and programs, COCO adapter, object-box masks, residual cues."""
