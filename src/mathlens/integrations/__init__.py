"""mathlens inside other evaluation tools: an Inspect scorer (`inspect`) and an lm-eval metric (`lm_eval`)."""
