"""Times the Django admin and any unformatted `{{ time }}` show, in English: the same layout as
the pages (2026-12-06 02:43:10 UTC), with the time zone, since an operator may read them from
anywhere. Dates stay as Django writes them."""

DATETIME_FORMAT = "Y-m-d H:i:s T"
SHORT_DATETIME_FORMAT = "Y-m-d H:i T"
