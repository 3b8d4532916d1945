"""Deep linking: what an instructor may place in their course, and the signed answer.

The instructor picks, inside the LMS, a lesson of the course, a built-in exercise or one of
their lecture plans (:func:`choices`); :func:`resource` makes the content item the platform
stores: a resource link to this tool's launch address with the item as its custom parameter
``item`` (read back at every launch: lockviz.lms.launch.item_of), and, for a lesson or an
exercise, a line item of 1 point, so the LMS's gradebook has a column its scores go to.
The answer is a JWT signed with the tool's key (django-lti's key, in its JWKS), posted back to
the platform's ``deep_link_return_url`` by the form pylti1p3 writes.
"""

from __future__ import annotations

from dataclasses import dataclass

from pylti1p3.deep_link_resource import DeepLinkResource
from pylti1p3.lineitem import LineItem

from lockviz.exercises.builtin import builtin
from lockviz.models import Plan
from lockviz.teaching import lessons


@dataclass(frozen=True)
class Choice:
    item: str  # "lesson:<slug>", "exercise:<slug>", "plan:<id>"
    title: str
    graded: bool  # a score goes back to the gradebook


def choices(owner: str) -> dict[str, list[Choice]]:
    """What the instructor (``owner``) may place, by kind."""
    return {
        "Exercises": [Choice(f"exercise:{slug}", ex.title, True) for slug, ex in builtin().items()],
        "Lessons": [
            Choice(f"lesson:{lesson.slug}", f"Lesson {lesson.number}: {lesson.title}", True)
            for lesson in lessons.course()
        ],
        "Your lecture plans": [
            Choice(f"plan:{plan.pk}", plan.title, False)
            for plan in Plan.objects.filter(owner=owner).only("pk", "title")[:50]
        ],
    }


def find(owner: str, item: str) -> Choice | None:
    return next((c for group in choices(owner).values() for c in group if c.item == item), None)


def resource(choice: Choice, launch_url: str) -> DeepLinkResource:
    """The content item for ``choice``: a link to the launch, with its line item if graded."""
    link = (
        DeepLinkResource()
        .set_url(launch_url)
        .set_title(choice.title[:200])
        .set_custom_params({"item": choice.item})
    )
    if choice.graded:
        line = LineItem().set_score_maximum(1).set_label(choice.title[:200])
        link.set_lineitem(line.set_resource_id(choice.item))
    return link
