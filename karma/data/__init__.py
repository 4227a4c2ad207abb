"""Loading and validating Karma-MV files (QA and scene features) in every published variant."""

from karma.data.dataset import Dataset, discover_files, load_dataset
from karma.data.features_loader import FEATURES_SUFFIX, FeaturesFileResult, load_features_file
from karma.data.json_values import JsonReadError, read_json_values
from karma.data.problems import DataProblem, DataValidationError
from karma.data.qa_loader import QA_SUFFIX, QaFileResult, load_qa_file

__all__ = [
    "FEATURES_SUFFIX",
    "QA_SUFFIX",
    "DataProblem",
    "DataValidationError",
    "Dataset",
    "FeaturesFileResult",
    "JsonReadError",
    "QaFileResult",
    "discover_files",
    "load_dataset",
    "load_features_file",
    "load_qa_file",
    "read_json_values",
]
