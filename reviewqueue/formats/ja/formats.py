"""Times the Django admin and any unformatted `{{ time }}` show, in Japanese: as in English
(see formats/en), with the time zone."""

DATETIME_FORMAT = "Y-m-d H:i:s T"
SHORT_DATETIME_FORMAT = "Y-m-d H:i T"
