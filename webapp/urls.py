from django.urls import path

from webapp import views

urlpatterns = [
    path("", views.experiment_list, name="home"),
    path("experiments/new/", views.experiment_new, name="experiment-new"),
    path("experiments/<int:pk>/", views.experiment_detail, name="experiment"),
    path("experiments/<int:pk>/status.json", views.experiment_status, name="experiment-status"),
    path("runs/<int:pk>/result.json", views.run_result, name="run-result"),
]
