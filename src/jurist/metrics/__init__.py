"""Metrics over judge outputs: agreement between judges, and between judges and human labels."""

from jurist.metrics.agreement import (
    ConfusionMatrix,
    accuracy,
    cohen_kappa,
    confusion_matrix,
    krippendorff_alpha,
    pairwise_cohen_kappa,
    plurality,
    position_bias,
)

__all__ = [
    "ConfusionMatrix",
    "accuracy",
    "cohen_kappa",
    "confusion_matrix",
    "krippendorff_alpha",
    "pairwise_cohen_kappa",
    "plurality",
    "position_bias",
]
