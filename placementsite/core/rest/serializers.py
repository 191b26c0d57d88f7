"""What every ``/api/`` serializer that takes input shares.

:class:`StrictFieldsMixin` refuses a body's fields the serializer does not take, naming them:
a typo (``{"enable": false}``) or a field only shown (``{"vcpus": 4}`` on a PATCH) must be a
400, never dropped silently while the answer says 200.
"""

from rest_framework import serializers


class StrictFieldsMixin:
    """Refuses unknown and read-only fields with a 400 naming each.

    ``unknown_field_message`` and ``read_only_field_message`` say it in the serializer's
    words (a scheduler hint is "unknown scheduler hint").
    """

    unknown_field_message = "Unknown field."
    read_only_field_message = "Read-only field."

    def to_internal_value(self, data):
        if isinstance(data, dict):
            errors = {}
            for name in sorted(data):
                known = self.fields.get(name)
                if known is None:
                    errors[name] = [self.unknown_field_message]
                elif known.read_only:
                    errors[name] = [self.read_only_field_message]
            if errors:
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)


class StrictSerializer(StrictFieldsMixin, serializers.Serializer):
    """A plain serializer with :class:`StrictFieldsMixin`."""
