"""Tell the OpenAPI schema how API tokens are sent."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "reviewqueue.accounts.authentication.ApiTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):  # type: ignore[no-untyped-def]
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": ("The word `Token`, a space, then the key: `Token rq_…` (a bare key "
                            "is refused). Issue one with `python manage.py issue_token NAME`."),
        }
