"""GET /api/v1/metrics: the insight figures as JSON, for admins."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reviewqueue.accounts.models import ApiToken, Role
from reviewqueue.api_base import RoleAndScope
from reviewqueue.api_errors import error_body, flatten_errors
from reviewqueue.insight import snapshots
from reviewqueue.insight.forms import WINDOW_PARAMS, WindowForm
from reviewqueue.params import param_problems


class MetricsView(APIView):
    permission_classes = [RoleAndScope]
    allowed_roles = (Role.ADMIN,)
    required_scope = ApiToken.Scope.READ

    @extend_schema(
        summary="Hold rates, review outcomes, citation quality, false-pass estimate, backlog",
        description=(
            "Figures cover the answers received between `since` and `until` (inclusive; the "
            "last 30 days by default), optionally of one `release`. Gate figures use each "
            "answer's first verdict; review figures its first decision. Every share is "
            "`{count, of, rate}`, with `rate` null when `of` is 0. Breakdowns carry reason "
            "codes and release names only, never text. Unknown parameters are refused.\n\n"
            "The figures are computed by a background worker, not while you wait: "
            "`generated_at` says when. The last 30 days are refreshed every minute; another "
            "window is computed when first asked for. `status` is `ready`, `refreshing` (the "
            "figures are older than a few minutes and a fresh computation is on its way) or "
            "`computing` (none yet: only `window` is given; ask again after "
            "`retry_after_seconds`)."
        ),
        parameters=[
            OpenApiParameter("since", OpenApiTypes.DATE, description="First day (YYYY-MM-DD)"),
            OpenApiParameter("until", OpenApiTypes.DATE, description="Last day (YYYY-MM-DD)"),
            OpenApiParameter("release", OpenApiTypes.STR, description="One index release"),
            OpenApiParameter("bucket", OpenApiTypes.STR, enum=["day", "week"],
                             description="Period of the hold rate over time"),
        ],
        responses={200: OpenApiTypes.OBJECT,
                   400: OpenApiResponse(description="An unknown or invalid parameter")},
    )
    def get(self, request: Request) -> Response:
        # By name, as given: a name may hold a colon ("team:name").
        problems = param_problems(request.query_params, WINDOW_PARAMS)
        if problems:
            errors = [{"field": name, "message": problem} for name, problem in problems.items()]
            summary = "; ".join(f"{name}: {problem}" for name, problem in problems.items())
            return Response(error_body("invalid", summary, errors), status=400)
        form = WindowForm(request.query_params)
        if not form.is_valid():
            errors = flatten_errors({k: [str(m) for m in v] for k, v in form.errors.items()})
            summary = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
            return Response(error_body("invalid", summary, errors), status=400)
        snapshot = snapshots.snapshot_read(form.window)
        if snapshot.metrics is None:
            wait = snapshots.REFRESH_EVERY // 6
            # Said in the body and, for clients that wait by the header, as Retry-After.
            return Response({"status": snapshot.status, "window": form.window.as_dict(),
                             "generated_at": None, "retry_after_seconds": wait},
                            headers={"Retry-After": str(wait)})
        return Response({"status": snapshot.status, **snapshot.metrics})
