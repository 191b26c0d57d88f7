"""``/resource_classes`` (1.2+)."""

from placementsite.core.api.microversion import since
from placementsite.core.api.views import PlacementView, latest

from .. import policies
from ..models import ResourceClass
from ..services import resource_classes as services
from .schemas import RESOURCE_CLASS_BODY, validate_custom_name


def resource_class_repr(rc):
    return {"name": rc.name, "links": [{"rel": "self", "href": f"/resource_classes/{rc.name}"}]}


class ResourceClassListView(PlacementView):
    @since("1.2")
    def get(self, request):
        self.authorize(request, policies.RESOURCE_CLASSES_LIST)
        classes = list(ResourceClass.objects.order_by("id"))
        return self.respond(
            request,
            {"resource_classes": [resource_class_repr(rc) for rc in classes]},
            last_modified=latest(*(rc.last_modified for rc in classes)),
        )

    @since("1.2")
    def post(self, request):
        self.authorize(request, policies.RESOURCE_CLASSES_CREATE)
        data = self.json_body(request, RESOURCE_CLASS_BODY)
        rc = services.resource_class_create(name=data["name"])
        return self.respond(
            request, status=201, headers={"Location": f"/resource_classes/{rc.name}"}
        )


class ResourceClassDetailView(PlacementView):
    @since("1.2")
    def get(self, request, name):
        self.authorize(request, policies.RESOURCE_CLASSES_SHOW)
        rc = services.resource_class_get(name=name)
        return self.respond(request, resource_class_repr(rc), last_modified=rc.last_modified)

    @since("1.2")
    def put(self, request, name):
        self.authorize(request, policies.RESOURCE_CLASSES_UPDATE)
        if request.microversion >= (1, 7):
            # Idempotent create: 201 when new, 204 when it already existed.
            validate_custom_name(name)
            rc, created = services.resource_class_ensure(name=name)
            # Location both when created (201) and when it already existed (204).
            return self.respond(
                request,
                status=201 if created else 204,
                headers={"Location": f"/resource_classes/{rc.name}"},
            )
        data = self.json_body(request, RESOURCE_CLASS_BODY)
        rc = services.resource_class_rename(name=name, new_name=data["name"])
        return self.respond(request, resource_class_repr(rc))

    @since("1.2")
    def delete(self, request, name):
        self.authorize(request, policies.RESOURCE_CLASSES_DELETE)
        services.resource_class_delete(name=name)
        return self.respond(request, status=204)
