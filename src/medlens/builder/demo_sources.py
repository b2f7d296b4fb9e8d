"""Names of the demo's source images that a reader understands (the files stay in `source_file`)."""

from __future__ import annotations

import dataclasses

from medlens.builder.questions import Draft

SOURCE_NAMES = {
    "pydicom/J2K_pixelrep_mismatch.dcm": "CT head (pydicom sample)",
    "pydicom/CT_small.dcm": "CT thorax (pydicom sample)",
    "pydicom/examples_overlay.dcm": "MR abdomen with lesion overlay (pydicom sample)",
    "pydicom/JPEG2000.dcm": "whole-body bone scan (pydicom sample)",
    "pydicom/examples_jpeg2k.dcm": "Doppler ultrasound, lymph node (pydicom sample)",
    "pydicom/examples_ybr_color.dcm": "echocardiography (pydicom sample)",
    "pydicom/waveform_ecg.dcm": "12-lead ECG (pydicom sample)",
    "pydicom/liver_1frame.dcm": "liver segmentation of a CT (pydicom sample)",
    "skimage/retina.jpg": "fundus photograph (scikit-image sample)",
    "skimage/microaneurysms.png": "retinal microaneurysms (scikit-image sample)",
    "skimage/ihc.png": "IHC histology, colonic glands (scikit-image sample)",
    "skimage/cell.png": "quantitative-phase cell microscopy (scikit-image sample)",
}


def readable_source(draft: Draft) -> Draft:
    """The draft with `source` a readable name and the bundled file kept in `source_file`."""
    file = draft.meta["source"]
    meta = {**draft.meta, "source": SOURCE_NAMES.get(file, file), "source_file": file}
    return dataclasses.replace(draft, meta=meta)
