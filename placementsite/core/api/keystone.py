"""``PLACEMENT_AUTH_STRATEGY=keystone``: keystonemiddleware's auth_token around the WSGI app.

As Placement deploys it, the middleware validates ``X-Auth-Token`` (and a service token in
``X-Service-Token``) against Keystone and hands the application the validated identity; the
``keystone`` strategy (:func:`placementsite.core.api.auth.keystone_context`) builds the request
context from it. Its options are the ``[keystone_authtoken]`` section of a Placement-style
config file (``PLACEMENT_KEYSTONE_CONFIG_FILE``, e.g. ``/etc/placement/placement.conf``)
and/or environment variables ``PLACEMENT_KEYSTONE_<OPTION>`` naming any option of that
section (``PLACEMENT_KEYSTONE_AUTH_URL``, ``..._USERNAME``, ``..._PASSWORD``,
``..._PROJECT_NAME``, ``..._REGION_NAME``, ``..._MEMCACHED_SERVERS``, ...), which win over
the file.

``delay_auth_decision`` is always on: the middleware marks a missing or bad token instead of
answering, so that ``GET /`` and ``/healthcheck`` stay open and refusals are in Placement's
error format.
"""

import os

from django.core.exceptions import ImproperlyConfigured

GROUP = "keystone_authtoken"
ENV_PREFIX = "PLACEMENT_KEYSTONE_"
CONFIG_FILE_ENV = "PLACEMENT_KEYSTONE_CONFIG_FILE"
# Deployment defaults Placement's own install guide sets.
DEFAULTS = {"auth_type": "password", "service_token_roles_required": True}


def auth_token_config(environ=None):
    """An oslo.config object with the ``[keystone_authtoken]`` options in force."""
    environ = os.environ if environ is None else environ
    conf = _config_from_file(environ.get(CONFIG_FILE_ENV, ""))
    overrides = _env_overrides(environ)
    auth_type = overrides.get("auth_type") or conf[GROUP].auth_type or DEFAULTS["auth_type"]
    _register_auth_plugin_opts(conf, auth_type)
    for name, value in DEFAULTS.items():
        conf.set_default(name, value, group=GROUP)
    _apply_env_overrides(conf, overrides, auth_type)
    # Refusals are ours (Placement's format), and some URLs need no token.
    conf.set_override("delay_auth_decision", True, group=GROUP)
    return conf


def _config_from_file(config_file):
    """auth_token's options registered, read from ``config_file`` (if one is named)."""
    from keystonemiddleware import auth_token
    from oslo_config import cfg

    if config_file and not os.path.isfile(config_file):
        raise ImproperlyConfigured(f"{CONFIG_FILE_ENV} {config_file} is not a file")
    conf = cfg.ConfigOpts()
    conf([], project="placement", default_config_files=[config_file] if config_file else [])
    for group, opts in auth_token.list_opts():
        conf.register_opts(opts, group=group)
    return conf


def _env_overrides(environ):
    """``{option: value}`` of the ``PLACEMENT_KEYSTONE_<OPTION>`` variables."""
    return {
        name[len(ENV_PREFIX) :].lower(): value
        for name, value in environ.items()
        if name.startswith(ENV_PREFIX) and name != CONFIG_FILE_ENV
    }


def _register_auth_plugin_opts(conf, auth_type):
    """The options of keystoneauth's ``auth_type`` plugin (the service user's credentials)."""
    from keystoneauth1 import loading

    try:
        plugin_opts = loading.get_auth_plugin_conf_options(auth_type)
    except Exception as exc:  # keystoneauth's NoMatchingPlugin and friends
        raise ImproperlyConfigured(f"{ENV_PREFIX}AUTH_TYPE {auth_type!r}: {exc}") from None
    conf.register_opts(plugin_opts, group=GROUP)


def _apply_env_overrides(conf, overrides, auth_type):
    """Each override set over the file; an option auth_token does not know is refused."""
    known = {opt.dest for opt in conf[GROUP]._group._opts.values() for opt in [opt["opt"]]}
    for name, value in overrides.items():
        if name not in known:
            raise ImproperlyConfigured(
                f"{ENV_PREFIX}{name.upper()}: keystonemiddleware has no option {name!r} "
                f"(for auth_type {auth_type})"
            )
        try:
            conf.set_override(name, value, group=GROUP)
        except ValueError as exc:
            raise ImproperlyConfigured(f"{ENV_PREFIX}{name.upper()}: {exc}") from None


def wrap(app, environ=None):
    """``app`` behind keystonemiddleware's auth_token; ImproperlyConfigured if it cannot be."""
    from keystoneauth1 import exceptions as ksa_exceptions
    from keystonemiddleware import auth_token

    conf = auth_token_config(environ)
    try:
        return auth_token.AuthProtocol(app, {"oslo_config_config": conf})
    except (ksa_exceptions.ClientException, ValueError) as exc:
        # e.g. the service user's auth_url or password missing
        raise ImproperlyConfigured(f"keystone auth_token: {exc}") from None


def check(environ=None):
    """Build the middleware once, so that a bad configuration stops startup."""
    wrap(lambda environ, start_response: [], environ)
