//! The local fixture web: a multi-host HTTP server on 127.0.0.1 that answers absolute-URI (proxy) requests for any host name and logs every request.
