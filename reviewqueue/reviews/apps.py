from django.apps import AppConfig


class ReviewsConfig(AppConfig):
    name = "reviewqueue.reviews"
    label = "reviews"
    verbose_name = "Answers and reviews"
