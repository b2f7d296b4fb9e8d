"""Genomic variant calling from pileup images (MultiMedBench's genomics task): each image is
a candidate site rendered as DeepVariant renders it, and the answer is its genotype.

MultiMedBench's pileup set has no public release, so this reads DeepVariant's own
convention (google/deepvariant, ``make_examples``: each example's ``label`` is the number of
alternate alleles, 0 = homozygous reference, 1 = heterozygous, 2 = homozygous alternate;
pileups exported to PNG as its "Looking through DeepVariant's eyes" notebook does) from a
folder holding ``labels.csv`` and the PNGs. Columns: ``image`` (file name, relative to the
folder) and ``label`` (``0``/``1``/``2`` or ``hom-ref``/``het``/``hom-alt``), optional
``variant_type`` (``SNV`` or ``indel``) and ``locus`` (``chrom:pos``). Items are ``classify``
items over the three genotypes; with ``variant_type`` given, ``results["variant_calling"]``
adds SNV and indel precision, recall and F1 of the variant calls (``variant_calling.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from medlens.core.errors import InputError
from medlens.core.items import Benchmark, Item
from medlens.core.specs import Spec
from medlens.sources import native
from medlens.sources.release_csv import find_table, read_release_table

CARD = {
    "licence": "as the source reads (DeepVariant: BSD-3-Clause code; data per its source)",
    "access": "mixed",
    "homepage": "https://github.com/google/deepvariant",
    "citation": "@article{poplin2018deepvariant, title={A universal SNP and small-indel "
    "variant caller using deep neural networks}, author={Poplin, Ryan and others}, "
    "journal={Nature Biotechnology}, volume={36}, pages={983--987}, year={2018}, "
    "doi={10.1038/nbt.4235}}",
}
SPLITS = ("test",)
GENOTYPES = ("homozygous reference", "heterozygous", "homozygous alternate")
_LABELS = {"0": 0, "1": 1, "2": 2, "hom-ref": 0, "het": 1, "hom-alt": 2, "homref": 0,
           "homalt": 2}  # fmt: skip
VARIANT_TYPES = {"snv": "SNV", "snp": "SNV", "indel": "indel"}
QUESTION = (
    "This is a pileup image of sequencing reads at a candidate variant site. What is the "
    "genotype: homozygous reference, heterozygous, or homozygous alternate?"
)


def load_pileup(spec: Spec) -> Benchmark:
    """``pileup:DIR`` (``labels.csv`` and the pileup PNGs)."""
    root = native.open_spec(spec, set())
    table = find_table(root, ("labels.csv",))

    def iter_items() -> Iterator[Item]:
        for where, row in read_release_table(table, ("image", "label")):
            yield _item(row, root, table, where)

    return native.make_benchmark(spec, "test", iter_items, description="pileup genotypes")


def _item(row: dict[str, str], root: Path, table: Path, where: str) -> Item:
    genotype = _LABELS.get(row["label"].strip().lower())
    if genotype is None:
        problem = f"{row['label']!r} is not 0/1/2 or hom-ref/het/hom-alt"
        raise InputError(table, f"{where}, field 'label'", problem)
    meta = {key: value for key, value in row.items() if value}
    kind = row.get("variant_type", "").strip().lower()
    if kind:
        if kind not in VARIANT_TYPES:
            raise InputError(
                table, f"{where}, field 'variant_type'", f"{kind!r} is not SNV or indel"
            )
        meta["variant_type"] = VARIANT_TYPES[kind]
    meta.update(labels="|".join(GENOTYPES), image_id=row["image"], modality="pileup image")
    image = native.file_image(root, row["image"], table, f"{where}, field 'image'")
    item_id = row.get("locus") or row["image"]
    return Item(id=item_id, question=QUESTION, kind="classify", answer=GENOTYPES[genotype],
                images=(image,), meta=meta)  # fmt: skip
