"""Every page and action of the app, by area; each view module is one area (lockviz/views/)."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import path

from lockviz.views import (
    compare,
    editor,
    embeds,
    exercise_editor,
    exercises,
    forks,
    health,
    lessons,
    library,
    lms,
    plans,
    play,
    progress,
    replay,
    room_control,
    rooms,
    runs,
    teachers,
)
from lockviz.views import imports as import_views

KEPT = "library/scenarios"  # a teacher's kept scenarios, as the library changes them
SAVED = "scenarios/saved/<str:saved_id>"  # one, as its permalink shows it

urlpatterns = [
    # Operating it: the process answers, it can serve now, what it is doing (lockviz.ops).
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", health.metrics_view, name="metrics"),
    # Runs: start one, watch it, its verdict, its JSON.
    path("", runs.index, name="index"),
    path("runs/", runs.start_run, name="start_run"),
    path("runs/<str:run_id>/", runs.run_page, name="run"),
    path("runs/<str:run_id>/verdict/", runs.verdict, name="verdict"),
    path("runs/<str:run_id>/export.json", runs.export_json, name="export_json"),
    # Lessons (walkthroughs of live runs) and side-by-side comparisons.
    path("lessons/", lessons.index, name="lessons"),
    path("lessons/<slug:slug>/", lessons.walkthrough, name="lesson"),
    path("lessons/<slug:slug>/run/", lessons.rerun, name="lesson_rerun"),
    path("lessons/<slug:slug>/answer", lessons.answer, name="lesson_answer"),
    path("exercises/", exercises.index, name="exercises"),
    path("exercises/new/", exercise_editor.new, name="exercise_new"),
    path("exercises/attempts/<int:attempt_id>/", exercises.attempt_result, name="exercise_attempt"),
    path("exercises/saved/<str:saved_id>/", exercises.saved_page, name="saved_exercise"),
    path("exercises/saved/<str:saved_id>/try", exercises.saved_try, name="saved_exercise_try"),
    path(
        "exercises/saved/<str:saved_id>/exercise.json",
        exercise_editor.export,
        name="saved_exercise_json",
    ),
    path("exercises/<slug:ref>/", exercises.exercise_page, name="exercise"),
    path("exercises/<slug:ref>/try", exercises.try_it, name="exercise_try"),
    path("progress/", progress.mine, name="my_progress"),
    path("progress/lessons/<slug:slug>", progress.lesson_mark, name="progress_lesson"),
    path("compare/", compare.compare, name="compare"),
    path("compare/lanes/<str:run_id>/", compare.lane_verdict, name="compare_verdict"),
    # Replays (time travel through a stored run), exports and imports.
    path("runs/<str:run_id>/replay/", replay.replay, name="replay"),
    path("runs/<str:run_id>/events.json", replay.replay_events, name="replay_events"),
    path("runs/<str:run_id>/export.mmd", replay.export_mermaid, name="export_mmd"),
    path("runs/<str:run_id>/export.html", embeds.export_html, name="export_html"),
    path("runs/<str:run_id>/fork/", forks.fork, name="fork"),
    # Replays that leave the site: the embed, the only page another site may frame.
    path("embed/runs/<str:run_id>/", embeds.embed_run, name="embed_run"),
    path("embed/plans/<str:plan_id>/", embeds.embed_plan, name="embed_plan"),
    path("import/", import_views.import_page, name="import"),
    path("import/run/", import_views.run_imported, name="import_run"),
    path("import/format/", import_views.scenario_format, name="scenario_format"),
    # New scenario: written in the browser, checked as it is typed, run, downloaded, linked.
    path("scenarios/new/", editor.new_scenario, name="new_scenario"),
    path("scenarios/new/check", editor.check, name="editor_check"),
    path("scenarios/new/export.json", editor.export, name="editor_export"),
    # Free play, and clicks that do things to a live run (the run page's menus, the buttons).
    path("play/", play.play, name="play"),
    path("play/<str:run_id>/", play.session, name="play_session"),
    path("runs/<str:run_id>/do", play.do, name="run_do"),
    path("runs/<str:run_id>/finish", play.finish, name="run_finish"),
    path("runs/<str:run_id>/scenario.json", play.scenario_json, name="run_scenario_json"),
    path("runs/<str:run_id>/again", play.again, name="run_again"),
    # Rooms: a presenter, a class that follows, polls.
    path("rooms/", rooms.open_room, name="open_room"),
    path("rooms/<str:code>/", rooms.room_page, name="room"),
    path("rooms/<str:code>/stop", rooms.stop_presenting, name="stop_presenting"),
    path("rooms/<str:code>/follow/", rooms.follow, name="follow_room"),
    path("rooms/<str:code>/show", rooms.show, name="room_show"),
    path("rooms/<str:code>/polls", rooms.ask, name="room_ask"),
    path("rooms/<str:code>/share", rooms.share, name="room_share"),
    path("rooms/<str:code>/progress/", progress.room_progress, name="room_progress"),
    path("rooms/<str:code>/progress.csv", progress.room_progress_csv, name="room_progress_csv"),
    path("rooms/<str:code>/allowance", rooms.allowance, name="room_allowance"),
    path("rooms/<str:code>/polls/<int:poll_id>/reveal", rooms.reveal, name="room_reveal"),
    path("rooms/<str:code>/polls/<int:poll_id>/vote", rooms.vote, name="room_vote"),
    # The presenter in control: settings, close, remove, approve shares, the presenter key.
    path("rooms/<str:code>/settings", room_control.configure, name="room_settings"),
    path("rooms/<str:code>/close", room_control.close, name="room_close"),
    path(
        "rooms/<str:code>/members/<int:member_id>/remove", room_control.remove, name="room_remove"
    ),
    path(
        "rooms/<str:code>/shares/<str:run_id>/<str:state>",
        room_control.decide,
        name="room_share_decide",
    ),
    path("rooms/<str:code>/key", room_control.new_key, name="room_new_key"),
    path("rooms/<str:code>/take/<str:key>", room_control.take_back, name="room_take"),
    path("r/<str:code>", rooms.join_room, name="join_room"),
    path("join", rooms.join_by_code, name="join"),
    path("runs/<str:run_id>/follow.json", rooms.run_for_followers, name="run_follow"),
    # Lecture plans: made, shared, exported and imported; presented to a room item by item.
    path("plans/", plans.index, name="plans"),
    path("plans/new/", plans.new, name="plan_new"),
    path("plans/import", plans.import_plan, name="plan_import"),
    path("plans/<str:plan_id>/", plans.plan_page, name="plan"),
    path("plans/<str:plan_id>/edit/", plans.edit, name="plan_edit"),
    path("plans/<str:plan_id>/copy", plans.copy, name="plan_copy"),
    path("plans/<str:plan_id>/add", plans.add, name="plan_add"),
    path("plans/<str:plan_id>/delete", plans.delete, name="plan_delete"),
    path("plans/<str:plan_id>/export.json", plans.export_json, name="plan_export"),
    path("plans/<str:plan_id>/present", plans.present, name="plan_present"),
    path("plans/<str:plan_id>/present/<int:number>", plans.go, name="plan_go"),
    path("plans/<str:plan_id>/stop", plans.stop, name="plan_stop"),
    # Teachers: accounts (the admin site's login is ours, under the same count of failures).
    path("accounts/login/", teachers.login_page, name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/signup/", teachers.signup, name="signup"),
    path("admin/login/", teachers.login_page),
    path("admin/", admin.site.urls),
    # LTI 1.3 (lockviz.lms): the OIDC login, the launch, deep linking's answer, the tool's keys.
    path("lti/login/", lms.OIDCLoginInitView.as_view(), name="lti_login"),
    path("lti/launch/", lms.Launch.as_view(), name="lti_launch"),
    path("lti/deep-link/", lms.choose, name="lti_deep_link"),
    path("lti/jwks/", lms.jwks, name="lti_jwks"),
    # A teacher's library: Save on a run, saved scenarios, the library page and its archive.
    path("runs/<str:run_id>/save", library.save_run, name="save_run"),
    path("library/", library.library_page, name="library"),
    path("library/scenarios/", library.add_scenario, name="add_scenario"),
    path(
        f"{KEPT}/<str:saved_id>/visibility", library.scenario_visibility, name="scenario_visibility"
    ),
    path("library/runs/<str:key>/delete", library.forget, {"kind": "runs"}, name="forget_run"),
    path(f"{KEPT}/<str:key>/delete", library.forget, {"kind": "scenarios"}, name="forget_scenario"),
    path("library/export.zip", library.export_library, name="library_export"),
    path("library/import/", library.import_library, name="library_import"),
    path(f"{SAVED}/", library.saved_scenario, name="saved_scenario"),
    path(f"{SAVED}/scenario.json", library.saved_scenario_json, name="saved_scenario_json"),
]
