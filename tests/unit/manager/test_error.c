/*
 * Unit tests for ctrl/error.h: codes, descriptions, the Go-style predicates
 * and the reason-then-status mapping.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "ctrl/error.h"

Test(error, strerror_covers_every_code)
{
    for (int code = CTRL_ERR_INTERNAL; code <= 0; code++)
        cr_assert_str_neq(ctrl_strerror(code), "unknown error", "code %d", code);
    for (int code = CTRL_ERR_API_LAST; code <= CTRL_ERR_API_FIRST; code++)
        cr_assert_str_neq(ctrl_strerror(code), "unknown error", "code %d", code);
    cr_assert_str_eq(ctrl_strerror(12345), "unknown error");
    cr_assert_str_eq(ctrl_strerror(CTRL_ERR_NOT_FOUND), "not found");
}

Test(error, reason_wins_over_http_status)
{
    /* 409 is Conflict unless the reason says AlreadyExists. */
    cr_assert_eq(ctrl_err_from_status(409, "AlreadyExists"), CTRL_ERR_ALREADY_EXISTS);
    cr_assert_eq(ctrl_err_from_status(409, "Conflict"), CTRL_ERR_CONFLICT);
    cr_assert_eq(ctrl_err_from_status(409, NULL), CTRL_ERR_CONFLICT);
    cr_assert_eq(ctrl_err_from_status(410, "Expired"), CTRL_ERR_EXPIRED);
    cr_assert_eq(ctrl_err_from_status(410, ""), CTRL_ERR_GONE);
    cr_assert_eq(ctrl_err_from_status(500, "ServerTimeout"), CTRL_ERR_SERVER_TIMEOUT);
    cr_assert_eq(ctrl_err_from_status(500, "SomethingNew"), CTRL_ERR_INTERNAL_ERROR);
    cr_assert_eq(ctrl_err_from_status(504, NULL), CTRL_ERR_API_TIMEOUT);
    cr_assert_eq(ctrl_err_from_status(418, NULL), CTRL_ERR_API_OTHER);
    cr_assert_eq(ctrl_err_from_status(200, NULL), 0);
    cr_assert_eq(ctrl_err_from_status(201, ""), 0);
    cr_assert_eq(ctrl_err_from_status(422, NULL), CTRL_ERR_INVALID);
    cr_assert_eq(ctrl_err_from_status(429, NULL), CTRL_ERR_TOO_MANY_REQUESTS);
}

Test(error, predicates)
{
    cr_assert(ctrl_err_is_not_found(CTRL_ERR_NOT_FOUND));
    cr_assert_not(ctrl_err_is_not_found(CTRL_ERR_CONFLICT));
    cr_assert_not(ctrl_err_is_not_found(0));
    cr_assert(ctrl_err_is_conflict(CTRL_ERR_CONFLICT));
    cr_assert_not(ctrl_err_is_conflict(CTRL_ERR_ALREADY_EXISTS));
    cr_assert(ctrl_err_is_already_exists(CTRL_ERR_ALREADY_EXISTS));
    cr_assert(ctrl_err_is_invalid(CTRL_ERR_INVALID));
    cr_assert(ctrl_err_is_gone(CTRL_ERR_GONE));
    cr_assert(ctrl_err_is_gone(CTRL_ERR_EXPIRED));
    cr_assert(ctrl_err_is_resource_expired(CTRL_ERR_EXPIRED));
    cr_assert_not(ctrl_err_is_resource_expired(CTRL_ERR_GONE));
    cr_assert(ctrl_err_is_timeout(CTRL_ERR_API_TIMEOUT));
    cr_assert(ctrl_err_is_timeout(CTRL_ERR_TIMEOUT));
    cr_assert(ctrl_err_is_server_timeout(CTRL_ERR_SERVER_TIMEOUT));
    cr_assert(ctrl_err_is_too_many_requests(CTRL_ERR_TOO_MANY_REQUESTS));
    cr_assert(ctrl_err_is_service_unavailable(CTRL_ERR_SERVICE_UNAVAILABLE));
    cr_assert(ctrl_err_is_internal_error(CTRL_ERR_INTERNAL_ERROR));
    cr_assert(ctrl_err_is_bad_request(CTRL_ERR_BAD_REQUEST));
    cr_assert(ctrl_err_is_unauthorized(CTRL_ERR_UNAUTHORIZED));
    cr_assert(ctrl_err_is_forbidden(CTRL_ERR_FORBIDDEN));
    cr_assert(ctrl_err_is_method_not_supported(CTRL_ERR_METHOD_NOT_ALLOWED));
    cr_assert(ctrl_err_is_not_acceptable(CTRL_ERR_NOT_ACCEPTABLE));
    cr_assert(ctrl_err_is_unsupported_media_type(CTRL_ERR_UNSUPPORTED_MEDIA));
    cr_assert(ctrl_err_is_request_entity_too_large(CTRL_ERR_TOO_LARGE));
    cr_assert(ctrl_err_is_no_match(CTRL_ERR_NO_MATCH));
}

Test(error, api_and_transport_are_disjoint)
{
    for (int code = CTRL_ERR_API_LAST; code <= CTRL_ERR_API_FIRST; code++) {
        cr_assert(ctrl_err_is_api(code), "%d", code);
        cr_assert_not(ctrl_err_is_transport(code), "%d", code);
    }
    cr_assert(ctrl_err_is_transport(CTRL_ERR_TRANSPORT));
    cr_assert(ctrl_err_is_transport(CTRL_ERR_TIMEOUT));
    cr_assert_not(ctrl_err_is_api(CTRL_ERR_TRANSPORT));
    cr_assert_not(ctrl_err_is_api(0));
    cr_assert_not(ctrl_err_is_api(CTRL_ERR_NOMEM));
}

Test(error, deinit_zeroes)
{
    ctrl_error err = {0};
    err.code = CTRL_ERR_NOT_FOUND;
    err.status = json_pack("{s:s}", "kind", "Status");
    err.causes = json_array(); /* not owned: deinit must not touch it */
    json_t *causes = err.causes;
    strcpy(err.reason, "NotFound");
    ctrl_error_deinit(&err);
    cr_assert_eq(err.code, 0);
    cr_assert_null(err.status);
    cr_assert_null(err.causes);
    cr_assert_str_eq(err.reason, "");
    json_decref(causes);
    ctrl_error_deinit(NULL);
}
