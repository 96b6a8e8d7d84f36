#!/usr/bin/env python3
"""A small fixed web for scripts/same-output.sh, served on 127.0.0.1 as an HTTP proxy.

Two hosts (news.test, lab.test): robots.txt, an RSS feed, a sitemap, listing pages, AI
and non-AI articles, a disallowed path, a 500 and a 404. Every answer is a pure function
of the URL, so two crawls of it can be compared. Writes its port to argv[1]; stops by
itself after 15 minutes.
"""
import http.server, sys, threading, urllib.parse

AI = ("The lab released a large language model trained with reinforcement learning. "
      "Researchers said the artificial intelligence system improves machine learning "
      "benchmarks, and OpenAI and DeepMind published comparable work on generative AI. ")
OTHER = ("The local team won the match after a late goal. Fans gathered in the square "
         "and the coach praised the defence, while the league table tightened. ")


def article(host, path, title, body, day, n):
    paras = "".join(f"<p>{body} Paragraph {i} of story {n} on {host}.</p>" for i in range(1, 7))
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta property="og:title" content="{title}">
<meta property="article:published_time" content="{day}T08:00:00Z">
<link rel="canonical" href="http://{host}{path}"></head><body>
<nav><a href="/">Home</a> <a href="/about.html">About</a></nav>
<article><h1>{title}</h1><p class="byline">By Ada Writer</p>{paras}</article>
<aside><a href="/2026/11/ai-story-1.html">Related: the first story</a></aside>
<footer>Copyright news</footer></body></html>"""


def news(path):
    stories = [(f"/2026/11/ai-story-{n}.html", f"AI story {n}: a new model", AI, n) for n in range(1, 9)]
    sport = [(f"/2026/11/sport-{n}.html", f"Sport {n}: a late goal", OTHER, n) for n in range(1, 5)]
    if path == "/robots.txt":
        return 200, "text/plain", "User-agent: *\nDisallow: /private/\nSitemap: http://news.test/sitemap.xml\n"
    if path == "/feed.xml":
        items = "".join(f"<item><title>{t}</title><link>http://news.test{p}</link>"
                        f"<pubDate>Mon, {10 + n:02d} Nov 2026 08:00:00 GMT</pubDate></item>"
                        for p, t, _, n in stories[:5])
        return 200, "application/rss+xml", f"<?xml version='1.0'?><rss version='2.0'><channel><title>News</title>{items}</channel></rss>"
    if path == "/sitemap.xml":
        urls = "".join(f"<url><loc>http://news.test{p}</loc><lastmod>2026-11-{10 + n:02d}</lastmod></url>"
                       for p, _, _, n in stories + sport)
        urls += "<url><loc>http://news.test/2026/11/broken.html</loc><lastmod>2026-11-15</lastmod></url>"
        return 200, "application/xml", f"<?xml version='1.0'?><urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>{urls}</urlset>"
    if path == "/":
        links = "".join(f"<li><a href='{p}'>{t}</a></li>" for p, t, _, _ in stories + sport)
        return 200, "text/html", f"<html><head><title>News</title></head><body><ul>{links}</ul><a href='/private/x.html'>x</a><a href='/gone.html'>gone</a></body></html>"
    if path == "/2026/11/broken.html":
        return 500, "text/plain", "boom"
    for p, t, body, n in stories + sport:
        if p == path:
            return 200, "text/html", article("news.test", p, t, body, f"2026-11-{10 + n:02d}", n)
    return 404, "text/plain", "not found"


def lab(path):
    posts = [(f"/blog/post-{n}.html", f"Lab note {n}: training the model", AI, n) for n in range(1, 6)]
    if path == "/robots.txt":
        return 200, "text/plain", "User-agent: *\nDisallow: /blog/private/\n"
    if path in ("/blog/", "/blog/page/2/"):
        part = posts[:3] if path == "/blog/" else posts[3:]
        links = "".join(f"<li><a href='{p}'>{t}</a></li>" for p, t, _, _ in part)
        more = "<a rel='next' href='/blog/page/2/'>Older</a>" if path == "/blog/" else ""
        return 200, "text/html", f"<html><head><title>Lab blog</title></head><body><ul>{links}</ul>{more}<a href='/blog/private/draft.html'>draft</a></body></html>"
    for p, t, body, n in posts:
        if p == path:
            return 200, "text/html", article("lab.test", p, t, body, f"2026-11-{n:02d}", n)
    return 404, "text/plain", "not found"


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        host = u.hostname or self.headers.get("Host", "").split(":")[0]
        path = u.path or "/"
        site = {"news.test": news, "lab.test": lab}.get(host)
        code, ctype, body = site(path) if site else (502, "text/plain", "unknown host")
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype + ("; charset=utf-8" if ctype.startswith("text") else ""))
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Last-Modified", "Mon, 16 Nov 2026 08:00:00 GMT")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Timer(900, server.shutdown).start()
with open(sys.argv[1], "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
