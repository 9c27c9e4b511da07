#!/bin/bash
# A user's server on Kubernetes, set up as on one machine: the person's own system user, with the
# uid the hub gave them (values.yaml, custom.course.uids), so nbgrader's shared exchange keeps
# each student's submissions and feedback theirs by file permissions, exactly as it does there.
# Z2JH starts every pod as one uid (jovyan, 1000) by default; on a shared volume that would let
# every student read every submission. Runs as root (singleuser.uid: 0), then drops to the person.
set -euo pipefail
: "${NB_USER:?the hub sets NB_USER}" "${NB_UID:?the hub sets NB_UID}" "${COURSE_ROLE:?the hub sets COURSE_ROLE}"

# Everyone in the class, so that owners in the exchange have names: nbgrader's collect checks that
# a submission claiming to be bob's is owned by bob.
IFS=, read -ra people <<< "${COURSE_ROSTER:-}"
for entry in "${people[@]}" "$NB_USER:$NB_UID"; do
  name="${entry%%:*}" id="${entry##*:}"
  getent passwd "$name" >/dev/null ||
    useradd --no-create-home --home-dir "/home/$name" --shell /bin/bash --uid "$id" --user-group "$name"
done

home="/home/$NB_USER"  # the person's own volume (singleuser.storage.homeMountPath)
mkdir -p "$home"
chown "$NB_USER:$NB_USER" "$home"
chmod 700 "$home"
# nbgrader's exchange: world-writable with the sticky bit (once per volume; harmless after).
chmod 1777 /srv/nbgrader/exchange 2>/dev/null || true

# The role's nbgrader settings, root's file in the user's home (theirs to read, not to rewrite).
config="/opt/course/config/$COURSE_ROLE.py"
sed "s|COURSE_ROOT|$home/pytorch-course|" "$config" > "$home/nbgrader_config.py"
chmod 644 "$home/nbgrader_config.py"
if [ "$COURSE_ROLE" = instructor ]; then
  # The instructor may grade as root, in the sandbox, as on one machine (needs a pod allowed to
  # make namespaces; see hub/z2jh/README.md).
  echo "$NB_USER ALL=(root) NOPASSWD: /opt/course/bin/course-autograde" > /etc/sudoers.d/course-hub
  chmod 440 /etc/sudoers.d/course-hub
fi

cd "$home"
export HOME="$home" USER="$NB_USER" JUPYTER_CONFIG_PATH="/etc/course/roles/$COURSE_ROLE"
start=()
if [ "$COURSE_ROLE" = student ]; then
  # The student's course, as on one machine (hub/user_start.py, run as them before their server):
  # nbgitpuller pulls the lessons (COURSE_LESSONS_REPO) into ~/lessons, the first assignment is
  # fetched once released, and the start page shows the two side by side.
  COURSE_OUTBOUND="/srv/nbgrader/exchange/$(cat /opt/course/config/course_id)/outbound"
  COURSE_WORKSPACES="$home/.jupyter/lab/workspaces"
  COURSE_START_PAGE=/etc/course/roles/student/start-page.jupyterlab-workspace
  export COURSE_OUTBOUND COURSE_WORKSPACES COURSE_START_PAGE
  start=(python /opt/course/bin/user_start.py)
  set -- "$@" --LabApp.workspaces_dir="$COURSE_WORKSPACES"
fi
exec setpriv --reuid="$NB_UID" --regid="$NB_UID" --init-groups -- \
  "${start[@]}" "$@" --LabApp.app_settings_dir="/etc/course/roles/$COURSE_ROLE"
