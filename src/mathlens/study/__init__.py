"""Study files: a run described once, in YAML (`mathlens run STUDY.yaml`, `mathlens schema study`)."""
