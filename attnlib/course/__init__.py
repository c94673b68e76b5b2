"""What serves the course rather than the model, one module per job.

Notebooks import these modules by name and call through them, e.g.
``from attnlib.course import plots`` then ``plots.plot_attention(...)``:

- ``plots``: heatmaps, attention maps, distributions and text tables (all notebooks)
- ``sliders``: the functions behind the notebooks' sliders, one module per notebook
- ``word_vectors``: GloVe vectors and analogies (01, 03, 04)
- ``toy_tasks``: the lookup and neighbour tasks and their small models (04, 05)
- ``dates``, ``date_translator``: the date-translation data and the trained translator (09)
- ``char_data``, ``char_gpt``: the course's prose as a corpus and the char GPT trained on it (10)
- ``inspection``: what MiniLM's heads attend to (11)
- ``own_encoder``: MiniLM's weights in the learner's own modules, the capstone (11)
- ``playgrounds``: the learner's own text through the course's models, one module per
  playground (``sampler``: a prompt through the char GPT of 10; ``dates``: a typed date
  through the translator of 09; ``predict_first``: a question answered before the key slider
  of 02, 03, 06 and 07 appears; ``attention_views`` and its modules: the head, model and
  neuron views of MiniLM, the char GPT and the toy models, 04, 05, 10, 11)
- ``attention_cost``, ``tensor_log``: the cost of attention, counted and measured (12)

Importing ``attnlib`` does not import this package (nor matplotlib).
"""
