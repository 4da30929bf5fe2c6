"""Records: data coming in.

What belongs here: the canonical record schema (``schema``), located error
reports for bad data (``errors``), the read-only upstream ``Row`` and its field
coercions (``rows``), reading and writing dataset files (``files``), turning
rows into records and an Inspect dataset (``build``) and fetching pinned
upstream files (``download``). A dataset's own loader lives in its plugin
folder and builds on these.
"""

from conflict_eval.records.build import build_dataset, convert_rows
from conflict_eval.records.errors import (
    ArgumentError,
    BadField,
    DataFileAdvice,
    DataFileError,
    DataNeeded,
    DatasetError,
    MissingField,
    RecordProblem,
    TaskArgument,
    argument_error,
    check_file,
)
from conflict_eval.records.files import ENCODING, not_utf8, read_json_or_jsonl, read_jsonl, write_jsonl
from conflict_eval.records.rows import Converter, Row, as_id, as_strings, content_id, numbered, optional_text
from conflict_eval.records.schema import (
    CONFLICT_TYPES,
    LETTERS,
    MAX_ID_CHARS,
    ConflictQA,
    Passage,
    PassageLabel,
    to_sample,
)
