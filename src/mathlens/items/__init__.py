"""Items: exams and datasets (schemas, loaders, built-in examples)."""

from mathlens.items.loaders import builtin_exams, load_items
from mathlens.items.schema import Cohort, Exam, Part, Question

__all__ = ["Cohort", "Exam", "Part", "Question", "builtin_exams", "load_items"]
