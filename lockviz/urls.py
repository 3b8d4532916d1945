from django.urls import path

from lockviz.views import runs as views

urlpatterns = [
    path("", views.index, name="index"),
    path("runs/", views.start_run, name="start_run"),
    path("runs/<str:run_id>/", views.run_page, name="run"),
    path("runs/<str:run_id>/verdict/", views.verdict, name="verdict"),
    path("runs/<str:run_id>/export.json", views.export_json, name="export_json"),
]
