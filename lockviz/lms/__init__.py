"""lockviz as an LTI 1.3 tool (LTI Advantage: deep linking, grades, class lists).

Built on django-lti (``lti_tool``: registrations, deployments, keys and their JWKS, the launch
and its validation by pylti1p3), chosen over pylti1p3's own Django adapter because it keeps
registrations, deployments and keys as models with an admin and key rotation, and records each
launch's users, contexts and memberships; pylti1p3 underneath checks every launch: the OIDC
state (a cookie set at login), the nonce (kept at login, used once), the issuer and audience
against a registration, the deployment id against that registration's active deployments (an
unknown one is refused), and the id token's signature against the platform's JWKS.

    launch.py     a validated launch, made lockviz's: the LMS user's own owner name, the
                  course's room (Instructor: its presenter, logged in to an account; Learner:
                  a member, no code), where the launch leads, and where grades go back
    deeplink.py   what an instructor may place in the course (a lesson, an exercise, a lecture
                  plan) and the signed answer to the platform
    grades.py     a score (lockviz.exercises.progress.scored) sent to the line item of each
                  launch that asked for it (Assignment and Grade Services)
    roster.py     the course's learners from the platform (Names and Role Provisioning), for
                  the class view
    register.py   a platform's registration, as the management command (``manage.py lti``)
                  and the admin make it

Nothing here trusts a role, a user or a course from anything but the validated launch: the
session keeps only the owner name the launch gave this browser (and an instructor's login).
docs/lms.md has the registration steps for Moodle and Canvas.
"""
