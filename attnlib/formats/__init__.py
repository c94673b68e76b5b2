"""File formats and tokenizers: reading a pretrained model's published files.

- ``safetensors_file``: the safetensors weight format, read with the standard library
- ``tokenizer``: the ``Tokenizer`` interface all attnlib tokenizers share (09, 10, 11)
- ``wordpiece``: BERT's WordPiece tokenizer
- ``minilm``: all-MiniLM-L6-v2 from its files into attnlib's layers, and its reference outputs

Notebook 11 uses all four.
"""
