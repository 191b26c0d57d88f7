"""The dashboard's provider and consumer links: the same URLs ``{% url %}`` gives, built
without resolving each row anew."""

import uuid

from django.urls import reverse, set_script_prefix

from placementsite.dashboard.templatetags.dashboard import consumer_url, provider_url


def test_links_are_the_reversed_urls():
    some = str(uuid.uuid4())
    assert provider_url(some) == reverse("dashboard:provider", args=[some])
    assert consumer_url(some) == reverse("dashboard:consumer", args=[some])


def test_links_follow_the_script_prefix_of_the_request():
    some = str(uuid.uuid4())
    set_script_prefix("/placement/")
    try:
        assert provider_url(some) == f"/placement/dashboard/providers/{some}/"
        assert provider_url(some) == reverse("dashboard:provider", args=[some])
    finally:
        set_script_prefix("/")
    assert provider_url(some) == f"/dashboard/providers/{some}/"
