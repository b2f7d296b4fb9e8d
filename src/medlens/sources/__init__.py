"""Benchmark loaders: one module per native format, found by name through a lazy registry, each
streaming Items; loader cards, subset sidecars, train files beside a split. Imports ``core``."""

from __future__ import annotations

from medlens.core.items import Benchmark
from medlens.core.registry import Registry
from medlens.core.specs import Spec

SOURCES: Registry = Registry("benchmark")
SOURCES.add(
    "demo",
    "medlens.builder.demo_source:load_demo",
    "demo",
    "embedded demo built from medical images shipped in pydicom and scikit-image",
)
SOURCES.add(
    "gmai",
    "medlens.sources.vlmeval:load_gmai",
    "gmai:PATH.tsv",
    "GMAI-MMBench TSV (VLMEvalKit format; VAL with answers, TEST without)",
)
SOURCES.add(
    "vlmeval",
    "medlens.sources.vlmeval:load_vlmeval",
    "vlmeval:PATH.tsv",
    "any VLMEvalKit MCQ TSV (base64 images)",
)
SOURCES.add(
    "jsonl",
    "medlens.sources.jsonl:load_jsonl",
    "jsonl:PATH.jsonl",
    "medlens native: one Item per line, image paths relative to the file",
)
# Native formats of the seed benchmarks (issue 6); each module's docstring documents its schema.
SOURCES.add(
    "vqa-rad",
    "medlens.sources.vqarad:load_vqarad",
    "vqa-rad:DIR[?split=test|train&format=mevf|public]",
    "VQA-RAD radiology VQA; MEVF data_RAD split (test 451) or the public JSON; "
    "yes/no closed → yes_no, other answers → open; axes answer_type, question_type, image_organ",
)
SOURCES.add(
    "slake",
    "medlens.sources.slake:load_slake",
    "slake:DIR[?split=test|validate|train&lang=en|zh|all]",
    "SLAKE bilingual radiology VQA (English test 1,061); Chinese yes/no forms → yes/no; axes "
    "modality, location, content_type, base_type, answer_type; organ boxes in meta",
)
SOURCES.add(
    "pathvqa",
    "medlens.sources.pathvqa:load_pathvqa",
    "pathvqa:DIR[?file=test_aligned_subset.json]",
    "PathVQA pathology VQA, aligned test subset (5,564); yes/no vs open; CMYK/grey → RGB",
)
SOURCES.add(
    "pubmedqa",
    "medlens.sources.pubmedqa:load_pubmedqa",
    "pubmedqa:DIR[?split=test|train&context=abstract|none]",
    "PubMedQA PQA-L yes/no/maybe (test 500); abstract as context, long answer never shown",
)
SOURCES.add(
    "medqa",
    "medlens.sources.medqa:load_medqa",
    "medqa:FILE.jsonl",
    "MedQA USMLE MCQ (4-option test 1,273); task axis = step1 / step2&3",
)
SOURCES.add(
    "medmcqa",
    "medlens.sources.medmcqa:load_medmcqa",
    "medmcqa:FILE|DIR[?cop=1|0&split=dev|test]",
    "MedMCQA dev (4,183; cop 1-based, cop=0 for HF) or its answerless test; subject axis",
)
SOURCES.add(
    "mmlu",
    "medlens.sources.mmlu:load_mmlu",
    "mmlu:DIR[?split=test|dev&subjects=a,b,...]",
    "MMLU clinical subjects, headerless CSVs (six subjects, test 1,089); subject axis",
)
SOURCES.add(
    "omnimedvqa",
    "medlens.sources.omnimedvqa:load_omnimedvqa",
    "omnimedvqa:DIR[?access=open|restricted|all&dataset=NAME]",
    "OmniMedVQA QA_information JSON (option_A..D, gt_answer text → letter); axes "
    "modality_type, question_type, dataset → source",
)
SOURCES.add(
    "medxpertqa",
    "medlens.sources.medxpertqa:load_medxpertqa",
    "medxpertqa:DIR[?config=mm|text&split=test|dev]",
    "MedXpertQA (MM: 5 options + images; Text: 10 options); axes medical_task, "
    "body_system, question_type",
)
SOURCES.add(
    "mmbu",
    "medlens.sources.mmbu:load_mmbu",
    "mmbu:DIR|FILE[?template=none|modality|full|all&mode=closed|open|all]",
    "MMBU perception: the ImageFolder release (metadata.jsonl) or TSVs; classification "
    "closed/open, box/mask-anchored, detection closed (candidate boxes) and open (multi-box "
    "F1 at IoU≥0.5); templates none/modality/full; dataset → source",
)
SOURCES.add(
    "medcmr",
    "medlens.sources.medcmr:load_medcmr",
    "medcmr:DIR|FILE[?kind=choice|open|all]",
    "Med-CMR's release (dataset/cmed.copy.*.cleaned.json, its fields exactly): 5-option MCQ "
    "and open items; dimension axis SOD, FDD, SU, TP, CR, LTG, MSI",
)
SOURCES.add(
    "imagefolder",
    "medlens.sources.imagefolder:load_imagefolder",
    "imagefolder:DIR[?split=NAME&question=TEXT]",
    "one sub-folder per class → classify items, label set = folder names "
    "(e.g. genomics pileup ref/het/hom-alt)",
)

# MultiMedQA long-form sets (issue 17): report-kind items scored by ROUGE-L/BLEU as proxies.
SOURCES.add(
    "liveqa",
    "medlens.sources.liveqa:load_liveqa",
    "liveqa:FILE.xml|DIR[?question=original|summary]",
    "TREC 2017 LiveQA Medical (104 test questions, reference answers); long answers",
)
SOURCES.add(
    "medicationqa",
    "medlens.sources.medicationqa:load_medicationqa",
    "medicationqa:FILE.xlsx|FILE.csv|DIR",
    "MedicationQA (MedInfo 2019, 690 questions with answers); long answers",
)
SOURCES.add(
    "healthsearchqa",
    "medlens.sources.healthsearchqa:load_healthsearchqa",
    "healthsearchqa:FILE.csv|DIR",
    "HealthSearchQA (3,173 consumer questions, no reference answers: human rating only)",
)
# MultiMedBench tasks (issue 15); each module's docstring cites its release's column names.
SOURCES.add(
    "mimic-cxr",
    "medlens.sources.mimic_cxr:load_mimic_cxr",
    "mimic-cxr:DIR[?split=test|validate|train&target=findings|impression&task=report|normal]",
    "MIMIC-CXR(-JPG) report generation (or task=normal: normal/abnormal from its CheXpert labels)",
)
SOURCES.add(
    "iu-xray",
    "medlens.sources.iu_xray:load_iu_xray",
    "iu-xray:DIR[?target=findings|impression]",
    "IU-Xray (Open-i) report generation: indiana_reports.csv + indiana_projections.csv",
)
SOURCES.add(
    "mimic-iii",
    "medlens.sources.mimic_iii:load_mimic_iii",
    "mimic-iii:DIR|NOTEEVENTS.csv",
    "MIMIC-III radiology notes: findings → impression summarisation (report items)",
)
SOURCES.add(
    "pad-ufes",
    "medlens.sources.pad_ufes:load_pad_ufes",
    "pad-ufes:DIR",
    "PAD-UFES-20 skin lesions: metadata.csv diagnostic (6 classes), patient_id",
)
SOURCES.add(
    "vindr-mammo",
    "medlens.sources.vindr_mammo:load_vindr_mammo",
    "vindr-mammo:DIR[?split=test|training]",
    "VinDr-Mammo BI-RADS 1-5 from breast-level_annotations.csv (official split)",
)
SOURCES.add(
    "cbis-ddsm",
    "medlens.sources.cbis_ddsm:load_cbis_ddsm",
    "cbis-ddsm:DIR[?split=test|train&abnormality=mass|calc|all&classes=2|3]",
    "CBIS-DDSM mass and calcification pathology (benign/malignant, or its 3 classes)",
)
SOURCES.add(
    "pileup",
    "medlens.sources.pileup:load_pileup",
    "pileup:DIR",
    "variant calling from pileup images (labels.csv: hom-ref/het/hom-alt, SNV/indel F1)",
)
SOURCES.add(
    "pmc-vqa",
    "medlens.sources.pmcvqa:load_pmcvqa",
    "pmc-vqa:DIR[?file=test_clean.csv|test.csv|test_2.csv|train.csv]",
    "PMC-VQA 4-option MCQ (test_clean 2,000); images/ or images.zip as on the Hub",
)
# Multimodal benchmarks medical teams run beside the seeds (issue 47): multi-image and 3D items.
SOURCES.add(
    "mmmu",
    "medlens.sources.mmmu:load_mmmu",
    "mmmu:DIR[?split=validation|dev|test&subjects=A,B,...]",
    "MMMU's medical subjects (Health & Medicine: 5 subjects, validation 150, test 1,752 without "
    "answers); per-subject parquet, up to 7 images a question in <image N> order",
)
SOURCES.add(
    "medframeqa",
    "medlens.sources.medframeqa:load_medframeqa",
    "medframeqa:DIR|FILE.json[?images=DIR]",
    "MedFrameQA multi-image VQA (2,851 questions, 2-5 ordered video frames each); the Hub "
    "parquet or the release JSON; axes body_system, modality, organ",
)
SOURCES.add(
    "rexvqa",
    "medlens.sources.rexvqa:load_rexvqa",
    "rexvqa:DIR[?split=test|valid|train&images=DIR]",
    "ReXVQA chest X-ray MCQ (metadata/*_vqa_data.json; every image of the study, ReXGradient-160K "
    "PNGs); task axis = task_name",
)
SOURCES.add(
    "m3d-vqa",
    "medlens.sources.m3dvqa:load_m3dvqa",
    "m3d-vqa:DIR[?split=test5k|test|val|train&mode=closed|open|all&images=DIR&slices=5&"
    "pick=uniform|middle|I,J&plane=stack|axial|coronal|sagittal&window=auto|L,W|lung|...&"
    "order=ascending|descending]",
    "M3D-VQA 3D CT questions; each volume (.npy, or NIfTI with the nifti extra) shown as chosen "
    "slices, the slicing recorded in the spec and every item",
)
SOURCES.add(
    "hfds",
    "medlens.sources.hfds:load_hfds",
    "hfds:REPO_OR_DIR[?split=&config=&revision=&preset=&download=1&question=&answer=&image=&options=&id=]",
    "a Hugging Face dataset: a repo id from the local Hub cache (offline; ?download=1 fetches), "
    "a cloned dataset folder (parquet, the card's configs:) or a save_to_disk folder; presets "
    "for VQA-RAD, PathVQA, SLAKE, PMC-VQA, OmniMedVQA, MedXpertQA, MMBU, GMAI-MMBench, MMMU, "
    "MedFrameQA, ReXVQA, M3D-VQA",
)


def load_benchmark(spec: Spec, *, lenient: bool = False) -> Benchmark:
    """Open the benchmark named by a parsed spec such as ``gmai:data/GMAI_mm_bench_VAL.tsv``.

    `lenient` (``medlens check``): a loader that takes a ``lenient`` keyword keeps the items
    that whole-file problems it can tolerate (a duplicate index, a gold answer not among the
    options) would otherwise reject, so the checklist reports them all; others ignore it.
    """
    import inspect

    loader = SOURCES.get(spec.name)
    if lenient and "lenient" in inspect.signature(loader).parameters:
        lenient_benchmark: Benchmark = loader(spec, lenient=True)
        return lenient_benchmark
    benchmark: Benchmark = loader(spec)
    return benchmark


__all__ = ["SOURCES", "load_benchmark"]
