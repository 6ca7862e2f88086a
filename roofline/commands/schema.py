"""`roofline schema`: the JSON Schema of results files.
"""

from __future__ import annotations

import typer

from ..console import present
from ..errors import UsageError
from ..outcome import Outcome


MOUNT = dict(short_help="Print the JSON Schema of results files.")


def command(
    profile: bool = typer.Option(False, "--profile", help="The schema of profile files (roofline profile) instead."),
    grade_files: bool = typer.Option(False, "--grade", help="The schema of grade files (roofline grade) instead."),
):
    """Print the JSON Schema of results files (schema 4; a profile's is schema 3), for other tools that read them; with
    --profile, that of a program's profile ("kind": "profile"); with --grade, that of grade files ("kind": "grade")."""

    if profile and grade_files:
        raise UsageError("give --profile or --grade, not both")
    present(view(schema(profile, grade_files)))


def schema(profile: bool = False, grade: bool = False) -> dict:
    """The JSON Schema of results files, or with `profile` of profile files."""
    from ..results.profile import ProfileResults
    from ..results.schema import json_schema
    if grade:
        from ..results.grades import GradeResults
        return GradeResults.model_json_schema(by_alias=True)
    return ProfileResults.model_json_schema(by_alias=True) if profile else json_schema()


def view(document: dict) -> Outcome:
    """A JSON Schema: the document alone."""
    return Outcome(document)
