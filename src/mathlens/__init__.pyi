# The types of the attributes `mathlens/__init__.py` loads on first use (see its notes).
from mathlens.api import DOCUMENTS as DOCUMENTS
from mathlens.api import Analysis as Analysis
from mathlens.api import AnswerConfig as AnswerConfig
from mathlens.api import AnswerVerdict as AnswerVerdict
from mathlens.api import ClaimCheck as ClaimCheck
from mathlens.api import Flow as Flow
from mathlens.api import FlowConfig as FlowConfig
from mathlens.api import Run as Run
from mathlens.api import StepCheck as StepCheck
from mathlens.api import VerifyConfig as VerifyConfig
from mathlens.api import check_answer as check_answer
from mathlens.api import document_spec as document_spec
from mathlens.api import flow as flow
from mathlens.api import open_run as open_run
from mathlens.api import verify_steps as verify_steps

__version__: str
__all__: list[str]
