"""The course beyond one machine (hub/z2jh/), checked offline, since no cluster is at hand: the Helm
values parse and name only settings the Zero to JupyterHub chart knows, with values it accepts;
the class logic in hub.extraConfig gives each person their own uid and role; the single-user
image installs exactly requirements.txt and hub/requirements.txt; the exchange volume is the one
every server mounts, ReadWriteMany. What needs a cluster is in hub/z2jh/README.md."""
import re
import subprocess
import sys
import types
from pathlib import Path

import yaml

from coursekit import ROOT

Z2JH = ROOT / "hub" / "z2jh"
VALUES = yaml.safe_load((Z2JH / "values.yaml").read_text())
DOCKERFILE = (Z2JH / "Dockerfile").read_text()

# The chart's settings, from its schema: jupyterhub/values.schema.yaml in
# https://github.com/jupyterhub/zero-to-jupyterhub-k8s at commit 02dd73df01bdbb6d602fed21b0be12565ab38080
# (the chart that runs JupyterHub 5.4; the schema sets additionalProperties: false on these objects,
# so helm itself refuses an unknown key). A dict: an object and its properties; None: a value (a
# scalar, a list, or a free-form map the chart passes on as it is). Only the parts a course could
# use are listed; a key missing here is one to look up in the schema, then add.
IMAGE = {"name": None, "tag": None, "pullPolicy": None, "pullSecrets": None}
EGRESS_RULES = dict.fromkeys(("cloudMetadataServer", "dnsPortsCloudMetadataServer", "dnsPortsKubeSystemNamespace",
                              "dnsPortsPrivateIPs", "nonPrivateIPs", "privateIPs"))
NETWORK_POLICY = {"enabled": None, "ingress": None, "egress": None, "egressAllowRules": EGRESS_RULES,
                  "interNamespaceAccessLabels": None, "allowedIngressPorts": None}
PDB = {"enabled": None, "maxUnavailable": None, "minAvailable": None}
SERVICE_ACCOUNT = {"create": None, "name": None, "annotations": None}
AFFINITY = {"required": None, "preferred": None}
NODE_AFFINITY = {"tolerations": None, "nodeAffinity": {"matchNodePurpose": None}}
SCHEMA = {
    "enabled": None, "fullnameOverride": None, "nameOverride": None, "imagePullSecret": None,
    "imagePullSecrets": None, "custom": None, "global": None,
    "hub": {
        "revisionHistoryLimit": None, "config": None, "extraFiles": None, "baseUrl": None, "command": None,
        "args": None, "cookieSecret": None, "image": IMAGE, "networkPolicy": NETWORK_POLICY,
        "db": {"type": None, "pvc": dict.fromkeys(("annotations", "selector", "storage", "accessModes",
                                                  "storageClassName", "subPath")),
               "upgrade": None, "url": None, "password": None},
        "labels": None, "initContainers": None, "extraEnv": None, "extraConfig": None, "fsGid": None,
        "service": {"type": None, "ports": {"nodePort": None}, "annotations": None, "extraPorts": None,
                    "loadBalancerIP": None},
        "pdb": PDB, "existingSecret": None, "nodeSelector": None, "tolerations": None, "activeServerLimit": None,
        "allowNamedServers": None, "annotations": None, "authenticatePrometheus": None,
        "concurrentSpawnLimit": None, "consecutiveFailureLimit": None, "podSecurityContext": None,
        "containerSecurityContext": None, "deploymentStrategy": {"rollingUpdate": None, "type": None},
        "extraContainers": None, "extraVolumeMounts": None, "extraVolumes": None, "livenessProbe": None,
        "readinessProbe": None, "namedServerLimitPerUser": None, "redirectToServer": None, "resources": None,
        "lifecycle": {"postStart": None, "preStop": None}, "services": None, "loadRoles": None,
        "shutdownOnLogout": None, "templatePaths": None, "templateVars": None, "serviceAccount": SERVICE_ACCOUNT,
        "extraPodSpec": None},
    "proxy": {
        "chp": dict.fromkeys(("revisionHistoryLimit", "extraCommandLineFlags", "extraEnv", "nodeSelector",
                              "tolerations", "containerSecurityContext", "livenessProbe", "readinessProbe",
                              "resources", "defaultTarget", "errorTarget", "extraPodSpec"))
        | {"networkPolicy": NETWORK_POLICY, "pdb": PDB, "image": IMAGE},
        "secretToken": None,
        "service": {"type": None, "labels": None, "annotations": None, "nodePorts": {"http": None, "https": None},
                    "disableHttpPort": None, "extraPorts": None, "loadBalancerIP": None,
                    "loadBalancerSourceRanges": None},
        "https": {"enabled": None, "type": None, "letsencrypt": {"contactEmail": None, "acmeServer": None},
                  "manual": {"key": None, "cert": None}, "secret": {"name": None, "key": None, "crt": None},
                  "hosts": None},
        "annotations": None, "deploymentStrategy": {"rollingUpdate": None, "type": None},
        "secretSync": {"containerSecurityContext": None, "image": IMAGE, "resources": None}},
    "singleuser": {
        "networkPolicy": NETWORK_POLICY, "podNameTemplate": None, "cpu": {"limit": None, "guarantee": None},
        "memory": {"limit": None, "guarantee": None}, "image": IMAGE, "initContainers": None, "profileList": None,
        "extraFiles": None, "extraEnv": None, "nodeSelector": None, "extraTolerations": None,
        "extraNodeAffinity": AFFINITY, "extraPodAffinity": AFFINITY, "extraPodAntiAffinity": AFFINITY,
        "cloudMetadata": {"blockWithIptables": None, "ip": None}, "cmd": None, "defaultUrl": None, "events": None,
        "extraAnnotations": None, "extraContainers": None, "extraLabels": None, "extraPodConfig": None,
        "extraResource": {"guarantees": None, "limits": None}, "fsGid": None,
        "lifecycleHooks": {"postStart": None, "preStop": None}, "networkTools": {"image": IMAGE, "resources": None},
        "serviceAccountName": None, "startTimeout": None,
        "storage": {"capacity": None,
                    "dynamic": dict.fromkeys(("pvcNameTemplate", "storageAccessModes", "storageClass",
                                              "volumeNameTemplate")),
                    "extraLabels": None, "extraVolumeMounts": None, "extraVolumes": None, "homeMountPath": None,
                    "static": {"pvcName": None, "subPath": None}, "type": None},
        "allowPrivilegeEscalation": None, "uid": None},
    "scheduling": {
        "userScheduler": dict.fromkeys(("enabled", "revisionHistoryLimit", "replicas", "nodeSelector", "tolerations",
                                        "labels", "annotations", "containerSecurityContext", "logLevel", "plugins",
                                        "pluginConfig", "resources", "extraPodSpec"))
        | {"image": IMAGE, "pdb": PDB, "serviceAccount": SERVICE_ACCOUNT},
        "podPriority": dict.fromkeys(("enabled", "globalDefault", "defaultPriority", "imagePullerPriority",
                                      "userPlaceholderPriority")),
        "userPlaceholder": dict.fromkeys(("enabled", "revisionHistoryLimit", "replicas", "labels", "annotations",
                                          "resources", "containerSecurityContext"))
        | {"image": IMAGE},
        "corePods": NODE_AFFINITY, "userPods": NODE_AFFINITY},
    "ingress": dict.fromkeys(("enabled", "annotations", "ingressClassName", "hosts", "pathSuffix", "pathType", "tls")),
    "prePuller": {
        "revisionHistoryLimit": None, "labels": None, "annotations": None, "resources": None,
        "extraTolerations": None,
        "hook": dict.fromkeys(("enabled", "pullOnlyOnChanges", "podSchedulingWaitDuration", "nodeSelector",
                               "tolerations", "containerSecurityContext", "resources"))
        | {"image": IMAGE, "serviceAccount": SERVICE_ACCOUNT},
        "continuous": {"enabled": None}, "pullProfileListImages": None, "extraImages": None,
        "containerSecurityContext": None, "pause": {"containerSecurityContext": None, "image": IMAGE}},
    "cull": dict.fromkeys(("enabled", "users", "adminUsers", "removeNamedServers", "timeout", "every", "concurrency",
                           "maxAge")),
    "debug": {"enabled": None},
    "rbac": {"enabled": None, "create": None},
}
# The schema's enums, for the settings that have one.
ENUMS = {
    "singleuser.storage.type": {"dynamic", "static", "none"},
    "proxy.service.type": {"ClusterIP", "NodePort", "LoadBalancer", "ExternalName"},
    "proxy.https.type": {None, "", "letsencrypt", "manual", "offload", "secret"},
    "singleuser.image.pullPolicy": {None, "", "IfNotPresent", "Always", "Never"},
    "hub.db.type": {"sqlite-pvc", "sqlite-memory", "mysql", "postgres", "other"},
}


def unknown_keys(values: dict, schema: dict, at: str = "") -> list[str]:
    found = []
    for key, value in values.items():
        path = f"{at}{key}"
        if key not in schema:
            found.append(path)
        elif isinstance(schema[key], dict):
            assert isinstance(value, dict), f"{path} must be a mapping"
            found += unknown_keys(value, schema[key], path + ".")
    return found


def lookup(values: dict, path: str):
    for key in path.split("."):
        values = values[key]
    return values


def test_the_key_check_catches_a_misspelt_key():
    assert unknown_keys({"singleuser": {"storage": {"extraVolumeMount": []}}, "hubb": {}}, SCHEMA) == [
        "singleuser.storage.extraVolumeMount", "hubb"]


def test_values_use_only_settings_the_chart_knows(covered):
    assert unknown_keys(VALUES, SCHEMA) == []
    for path, allowed in ENUMS.items():
        try:
            value = lookup(VALUES, path)
        except KeyError:
            continue
        assert value in allowed, f"{path}: {value!r} is not one of {sorted(map(str, allowed))}"
    image = VALUES["singleuser"]["image"]
    assert image["name"] and image["tag"] and image["tag"] != "latest", "pin the single-user image's tag"
    covered(f"values.yaml parses; its {len(leaves(VALUES))} settings are all in the chart's schema "
            f"(z2jh {SCHEMA_COMMIT[:8]}), enums within range, the image pinned")


SCHEMA_COMMIT = "02dd73df01bdbb6d602fed21b0be12565ab38080"


def leaves(values: dict, at: str = "") -> list[str]:
    out = []
    for key, value in values.items():
        out += leaves(value, f"{at}{key}.") if isinstance(value, dict) and key not in ("custom",) else [at + key]
    return out


def test_the_class_config_gives_each_person_their_uid_and_role(covered):
    """Runs hub.extraConfig as the chart's hub would, with its z2jh.get_config, then the spawn hook."""
    from traitlets.config import Config
    custom = VALUES["custom"]
    z2jh = types.ModuleType("z2jh")
    z2jh.get_config = lambda key, default=None: custom[key.split(".", 1)[1]] if key.startswith("custom.") else default
    c = Config()
    sys.modules["z2jh"] = z2jh
    try:
        for name, code in VALUES["hub"]["extraConfig"].items():
            exec(compile(code, f"hub.extraConfig.{name}", "exec"), {"c": c})
    finally:
        del sys.modules["z2jh"]
    uids = custom["course"]["uids"]
    assert c.Authenticator.allowed_users == set(uids)
    assert len(set(uids.values())) == len(uids), "two people share a uid: they could read each other's work"
    assert all(u >= 1000 and u != 1000 for u in uids.values()), "uids must be ordinary and not jovyan's 1000"
    hook = c.KubeSpawner.pre_spawn_hook
    roles = {}
    for name in uids:
        spawner = types.SimpleNamespace(user=types.SimpleNamespace(name=name), environment={})
        hook(spawner)
        env = spawner.environment
        assert (env["NB_USER"], int(env["NB_UID"])) == (name, uids[name])
        assert env["COURSE_ROSTER"].split(",") == [f"{n}:{u}" for n, u in uids.items()]
        roles[name] = env["COURSE_ROLE"]
        # A student's start pulls the lessons and opens the start page (hub/user_start.py, run by the entrypoint).
        student = env["COURSE_ROLE"] == "student"
        assert ("COURSE_LESSONS_REPO" in env) == student, f"{name}: lessons for a {env['COURSE_ROLE']}?"
        assert (getattr(spawner, "default_url", None) == "/lab/workspaces/course") == student
    assert roles == {n: "instructor" if n == custom["course"]["instructor"] else "student" for n in uids}
    assert VALUES["custom"]["course"]["lessons"]["repo"].startswith(("https://", "git@", "ssh://")), \
        "the lessons' repository must be a URL the cluster can reach"
    assert "COPY hub/user_start.py /opt/course/bin/user_start.py" in DOCKERFILE
    assert "/opt/course/bin/user_start.py" in (Z2JH / "entrypoint.sh").read_text()
    assert VALUES["singleuser"]["uid"] == 0, "the entrypoint must start as root to become the person"
    covered(f"hub.extraConfig run with the chart's get_config: {len(uids)} people, each their own uid and role; "
            "students' starts pull the lessons and open the start page")


def test_the_exchange_is_one_read_write_many_volume_every_server_mounts(covered):
    pvc = yaml.safe_load((Z2JH / "exchange-pvc.yaml").read_text())
    storage = VALUES["singleuser"]["storage"]
    claims = {v["name"]: v["persistentVolumeClaim"]["claimName"] for v in storage["extraVolumes"]}
    mounts = {m["name"]: m["mountPath"] for m in storage["extraVolumeMounts"]}
    assert pvc["kind"] == "PersistentVolumeClaim" and pvc["spec"]["accessModes"] == ["ReadWriteMany"]
    exchange = [name for name, claim in claims.items() if claim == pvc["metadata"]["name"]]
    assert exchange and mounts[exchange[0]] == "/srv/nbgrader/exchange"
    assert 'user_config("/srv/nbgrader/exchange"' in DOCKERFILE, "the image's nbgrader config names another exchange"
    assert "{username}" in storage["homeMountPath"], "homes must be per person, as the entrypoint expects"
    covered("the exchange: a ReadWriteMany claim, mounted by every server at the image's Exchange.root")


def pins(path: Path) -> dict[str, str]:
    lines = [ln.strip() for ln in path.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    bad = [ln for ln in lines if not re.fullmatch(r"[A-Za-z0-9_.-]+==[A-Za-z0-9_.+-]+", ln)]
    assert not bad, f"{path.name}: not exact pins: {bad}"
    return {re.sub(r"[-_.]+", "-", ln.split("==")[0].lower()): ln.split("==")[1] for ln in lines}


def dockerfile_runs() -> list[str]:
    joined = re.sub(r"\\\n\s*", " ", DOCKERFILE)
    return [ln[4:] for ln in joined.splitlines() if ln.startswith("RUN ")]


def test_the_image_installs_exactly_the_pinned_environment(covered):
    course, hub = pins(ROOT / "requirements.txt"), pins(ROOT / "hub" / "requirements.txt")
    assert not set(course) & set(hub), f"pinned twice: {set(course) & set(hub)}"
    assert re.search(r"^FROM python:3\.11\.\d+-slim-bookworm$", DOCKERFILE, re.M), "the image's Python must be 3.11"
    assert "COPY requirements.txt /opt/course/requirements.txt" in DOCKERFILE
    assert "COPY hub/requirements.txt /opt/course/hub-requirements.txt" in DOCKERFILE
    installs = [run for run in dockerfile_runs() if "pip install" in run]
    assert len(installs) == 1, f"one pip install, of the two files: {installs}"
    words = installs[0].split()
    packages = [w for i, w in enumerate(words)
                if not w.startswith("-") and words[i - 1] not in ("-r", "--extra-index-url")
                and w not in ("pip", "install")]
    assert packages == [], f"the image installs packages that are not pinned in the files: {packages}"
    assert [words[i + 1] for i, w in enumerate(words) if w == "-r"] == [
        "/opt/course/requirements.txt", "/opt/course/hub-requirements.txt"]
    assert "pytorch_course.pth" in DOCKERFILE, "the course's code must be importable in every kernel"
    for source in re.findall(r"^COPY (\S+) ", DOCKERFILE, re.M):
        assert (ROOT / source).exists(), f"the Dockerfile copies {source}, which the repository lacks"
    assert subprocess.run(["bash", "-n", Z2JH / "entrypoint.sh"]).returncode == 0
    covered(f"the image: Python 3.11, pip installs -r requirements.txt ({len(course)} pins) and "
            f"-r hub/requirements.txt ({len(hub)} pins) and nothing else; the course's code on the path")
