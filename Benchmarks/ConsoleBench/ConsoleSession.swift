import AsyncHTTPClient
import BenchSupport
import Foundation
import NIOCore
import NIOHTTP1

/// A signed-in console session, as a browser holds it: the cookie the sign-in form set.
struct ConsoleSession: Sendable {
    let http: HTTPClient
    let cookie: String

    /// Opens the one-time `link` and submits its sign-in form, as a person clicking *Sign in* does.
    static func signIn(http: HTTPClient, link: String) async throws -> ConsoleSession {
        guard let url = URL(string: link), let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let token = components.queryItems?.first(where: { $0.name == "t" })?.value
        else { throw BenchError("console-link printed no link: \(link)") }
        let opened = try await http.execute(HTTPClientRequest(url: link), timeout: .seconds(10))
        let page = try await opened.body.collect(upTo: 1 << 20)
        guard opened.status == .ok else { throw BenchError("the sign-in page \(link) answered \(opened.status): \(String(buffer: page).prefix(2000))") }

        var form = HTTPClientRequest(url: link.components(separatedBy: "?")[0])
        form.method = .POST
        form.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        form.body = .bytes(ByteBuffer(string: "t=" + (token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token)))
        let signedIn = try await http.execute(form, timeout: .seconds(10))
        _ = try await signedIn.body.collect(upTo: 1 << 20)
        guard signedIn.status == .seeOther, let setCookie = signedIn.headers.first(name: "Set-Cookie"),
            let pair = setCookie.split(separator: ";").first
        else { throw BenchError("signing in answered \(signedIn.status), without a session cookie") }
        return ConsoleSession(http: http, cookie: String(pair))
    }

    /// GETs `url` with the session; the page's size in bytes. A page that is not 200 stops the bench.
    func get(_ url: String) async throws -> Int {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Cookie", value: cookie)
        let response = try await http.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 16 << 20)
        guard response.status == .ok else { throw BenchError("\(url) answered \(response.status): \(String(buffer: body).prefix(300))") }
        return body.readableBytes
    }
}
