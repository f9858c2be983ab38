/*
 * inproc.c - a scenario's managers reach its fakeapi in-process (inproc.h).
 */
#include "inproc.h"

#include <stdlib.h>

#include "ctrl/error.h"

/* A cancelled watch (ctrl_watch_stop): its reader hangs up. */
static void hang_up(void *stream)
{
    fakeapi_stream_cancel(stream);
}

/* Hand a watch's bytes to libctrl until the stream ends, is cancelled, or
 * libctrl has had enough. */
static int pump(fakeapi_stream *s, const ctrl_roundtrip_io *io)
{
    if (io->on_cancel)
        io->on_cancel(io->io, hang_up, s);
    char buf[16384];
    for (;;) {
        ssize_t n = fakeapi_stream_read(s, buf, sizeof buf);
        if (n == 0)
            return 0;
        if (n < 0)
            return CTRL_ERR_CANCELLED;
        if (io->body(io->io, buf, (size_t)n) != 0)
            return 0;
    }
}

static int roundtrip(void *ud, const ctrl_roundtrip_request *req, const ctrl_roundtrip_io *io)
{
    fakeapi_server *srv = ud;
    if (io->cancelled && io->cancelled(io->io))
        return CTRL_ERR_CANCELLED;
    fakeapi_exchange_req x = {.method = req->method,
                              .target = req->target,
                              .content_type = req->content_type,
                              .accept = req->accept,
                              .user_agent = req->user_agent,
                              .token = req->bearer_token,
                              .body = req->body,
                              .body_len = req->body_len};
    fakeapi_exchange_resp a = {0};
    if (fakeapi_exchange(srv, &x, &a) < 0)
        return CTRL_ERR_NOMEM;
    int rc = 0;
    if (a.status == 0) {
        /* Dropped unanswered: what libcurl says of a closed connection. */
        if (io->fail)
            io->fail(io->io, CTRL_ROUNDTRIP_DROPPED, "Empty reply from server");
        rc = CTRL_ERR_TRANSPORT;
        goto out;
    }
    io->head(io->io, a.status, a.retry_after, a.content_type[0] ? a.content_type : NULL);
    if (a.closes && io->closes)
        io->closes(io->io);
    if (a.stream) {
        rc = pump(a.stream, io);
        /* No hang-up may reach the stream once it is freed below. */
        if (io->on_cancel)
            io->on_cancel(io->io, NULL, NULL);
    } else if (a.body_len > 0 && io->body(io->io, a.body, a.body_len) != 0) {
        rc = 0;
    } else if (a.truncated) {
        if (io->fail)
            io->fail(io->io, CTRL_ROUNDTRIP_DROPPED,
                     "transfer closed with outstanding read data remaining");
        rc = CTRL_ERR_TRANSPORT;
    }
out:
    fakeapi_exchange_resp_free(&a);
    return rc;
}

void scn__inproc_roundtripper(fakeapi_server *srv, ctrl_roundtripper *rt)
{
    /* The server's log (the trace) must be the one HTTP gives, libcurl's
     * re-sends on kept connections included. */
    *rt = (ctrl_roundtripper){.roundtrip = roundtrip, .ud = srv, .model_connections = true};
}
