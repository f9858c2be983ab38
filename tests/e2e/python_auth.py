"""python_auth.py KUBECONFIG CHECK - the official Python client (JSON bodies)
against the review APIs and pod subresources; test_kubectl_auth.sh runs one
CHECK at a time and expects "ok" on stdout."""
import base64
import json
import sys

from kubernetes import client, config
from kubernetes.client.rest import ApiException

config.load_kube_config(sys.argv[1])
core = client.CoreV1Api()
NS = "default"


def claims(token):
    p = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))


def ssar():
    r = client.AuthorizationV1Api().create_self_subject_access_review(
        client.V1SelfSubjectAccessReview(spec=client.V1SelfSubjectAccessReviewSpec(
            resource_attributes=client.V1ResourceAttributes(
                verb="delete", group="apps", resource="deployments", namespace=NS))))
    assert r.status.allowed is True, r.status


def whoami():
    # Client 22 has no typed call for authentication.k8s.io/v1 SelfSubjectReview.
    r = client.ApiClient().call_api(
        "/apis/authentication.k8s.io/v1/selfsubjectreviews", "POST",
        body={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
        header_params={"Content-Type": "application/json", "Accept": "application/json"},
        response_type="object", auth_settings=["BearerToken"], _return_http_data_only=True)
    u = r["status"]["userInfo"]
    assert u["username"] == "fakeapi-admin", u
    assert u["groups"] == ["system:masters", "system:authenticated"], u


def token():
    sa = core.create_namespaced_service_account(
        NS, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="py")))
    tr = core.create_namespaced_service_account_token(
        "py", NS, client.AuthenticationV1TokenRequest(
            spec=client.V1TokenRequestSpec(audiences=["api"], expiration_seconds=900)))
    c = claims(tr.status.token)
    assert c["sub"] == "system:serviceaccount:default:py", c
    assert c["aud"] == ["api"], c
    assert c["exp"] - c["iat"] == 900, c
    assert c["kubernetes.io"]["serviceaccount"]["uid"] == sa.metadata.uid, c
    rv = client.AuthenticationV1Api().create_token_review(client.V1TokenReview(
        spec=client.V1TokenReviewSpec(token=tr.status.token, audiences=["api"])))
    assert rv.status.authenticated is True, rv.status
    assert rv.status.user.username == "system:serviceaccount:default:py", rv.status
    try:
        core.create_namespaced_service_account_token(
            "py", NS, client.AuthenticationV1TokenRequest(
                spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=60)))
        raise AssertionError("a 60 s token was issued")
    except ApiException as e:
        assert e.status == 422, e


def pod(name, labels):
    core.create_namespaced_pod(NS, client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels=labels),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx:1")])))
    core.patch_namespaced_pod_status(name, NS, {"status": {"phase": "Running"}})


def evict():
    pod("e1", {"app": "py"})
    pod("e2", {"app": "py"})
    client.PolicyV1Api().create_namespaced_pod_disruption_budget(NS, client.V1PodDisruptionBudget(
        metadata=client.V1ObjectMeta(name="py"),
        spec=client.V1PodDisruptionBudgetSpec(
            min_available=1, selector=client.V1LabelSelector(match_labels={"app": "py"}))))
    ev = lambda n: core.create_namespaced_pod_eviction(n, NS, client.V1Eviction(
        metadata=client.V1ObjectMeta(name=n, namespace=NS)))
    ev("e1")
    try:
        ev("e2")
        raise AssertionError("the budget did not hold")
    except ApiException as e:
        assert e.status == 429, e
        body = json.loads(e.body)
        assert body["details"]["causes"][0]["reason"] == "DisruptionBudget", body
    names = [p.metadata.name for p in core.list_namespaced_pod(NS, label_selector="app=py").items]
    assert names == ["e2"], names


def logs():
    pod("lg", {})
    core.patch_namespaced_pod("lg", NS, {"metadata": {"annotations": {
        "fakeapi.kube-harness.io/log": "hello\nworld\n"}}})
    assert core.read_namespaced_pod_log("lg", NS) == "hello\nworld\n"
    assert core.read_namespaced_pod_log("lg", NS, tail_lines=1) == "world\n"


{"ssar": ssar, "whoami": whoami, "token": token, "evict": evict, "logs": logs}[sys.argv[2]]()
print("ok")
