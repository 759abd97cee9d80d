import Foundation
import Hummingbird
import HummingbirdTesting
import RelayConsole
import RelayCore
import RelayPipeline
import RelayTestSupport
import Testing

/// Issue 45, points 1 and 4: sign-in from chat by a one-time link, a session cookie bound to one
/// team, and the refusals — as the HTTP responses a browser gets.
@Suite("Console: sign-in by link, sessions, refusals")
struct ConsoleSignInTests {
    @Test func anAdminsLinkOpensASignInPageAndItsButtonSignsInOnce() async throws {
        let harness = ConsoleHarness()
        let reply = await harness.ask()
        #expect(reply.kind == .info && reply.isSecret && reply.isPrivate)
        #expect(reply.body.contains("It works once, within 10 minutes"))
        let path = try #require(ConsoleHarness.path(of: reply), "\(reply.body)")
        let token = String(path.dropFirst("/console/signin?t=".count))
        try await harness.test { client in
            // Opening the link (as a link preview would) uses nothing up.
            for _ in 0..<2 {
                let page = try await client.execute(uri: path, method: .get)
                #expect(page.status == .ok)
                #expect(page.text.contains("Sign in as <strong>Ada</strong> to the console of <strong>T1</strong> on test."))
                #expect(page.sessionCookie == nil)
            }
            let signIn = try await client.execute(
                uri: "/console/signin", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"], body: form(["t": token]))
            #expect(signIn.status == .seeOther)
            #expect(signIn.headers[.location] == "/console/test/T1")
            let cookie = try #require(signIn.sessionCookie)
            #expect(cookie.contains("HttpOnly") && cookie.contains("Secure") && cookie.contains("SameSite=Strict"), "\(cookie)")
            #expect(cookie.contains("Max-Age=3600") && cookie.contains("Path=/console/"), "\(cookie)")

            let overview = try await client.execute(uri: "/console/test/T1", method: .get, headers: [.cookie: cookieHeader(cookie)])
            #expect(overview.status == .ok)
            #expect(overview.text.contains("<h1>Overview</h1>"))
            #expect(overview.text.contains("T1 on test · Ada"))

            // The same link again: refused, saying why and what to do.
            let again = try await client.execute(
                uri: "/console/signin", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"], body: form(["t": token]))
            #expect(again.status == .gone)
            #expect(again.text.contains("This sign-in link was used already"))
            #expect(again.text.contains("/admin console"))
            #expect(again.sessionCookie == nil)
        }
    }

    @Test func aLinkExpiresAfterTenMinutesAndASessionAfterItsLifetime() async throws {
        let harness = ConsoleHarness()
        let late = try #require(ConsoleHarness.path(of: await harness.ask()))
        let fresh = try #require(ConsoleHarness.path(of: await harness.ask()))
        harness.clock.advance(by: .seconds(9 * 60))
        try await harness.test { client in
            let signIn = try await client.execute(
                uri: "/console/signin", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                body: form(["t": String(fresh.dropFirst("/console/signin?t=".count))]))
            let cookie = try #require(signIn.sessionCookie)
            harness.clock.advance(by: .seconds(2 * 60))
            let expired = try await client.execute(uri: late, method: .get)
            #expect(expired.status == .gone)
            #expect(expired.text.contains("This sign-in link has expired"))
            // The session signed in at 9 minutes lasts an hour from then.
            harness.clock.advance(by: .seconds(57 * 60))
            #expect(try await client.execute(uri: "/console/test/T1", method: .get, headers: [.cookie: cookieHeader(cookie)]).status == .ok)
            harness.clock.advance(by: .seconds(2 * 60))
            let ended = try await client.execute(uri: "/console/test/T1", method: .get, headers: [.cookie: cookieHeader(cookie)])
            #expect(ended.status == .unauthorized)
            #expect(ended.text.contains("Your sign-in has ended"))
        }
    }

    @Test func oneTeamsSessionIsRefusedAnotherTeamsPages() async throws {
        let harness = ConsoleHarness()
        let path = try #require(ConsoleHarness.path(of: await harness.ask()))
        try await harness.test { client in
            let signIn = try await client.execute(
                uri: "/console/signin", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                body: form(["t": String(path.dropFirst("/console/signin?t=".count))]))
            let cookie = cookieHeader(try #require(signIn.sessionCookie))
            for other in ["/console/test/T2", "/console/slack/T1", "/console/test/T1%20", "/console/test/t1"] {
                let refused = try await client.execute(uri: other, method: .get, headers: [.cookie: cookie])
                #expect(refused.status == .forbidden, "\(other)")
                #expect(refused.text.contains("You are signed in to T1 on test only"), "\(other)")
            }
            // Without a session, nothing but the reason.
            let anonymous = try await client.execute(uri: "/console/test/T1", method: .get)
            #expect(anonymous.status == .unauthorized)
            #expect(!anonymous.text.contains("Overview</h1>"))
            // A session token presented as a link, or forged, is no link.
            let session = String(cookie.dropFirst("rhea_console=".count))
            #expect(try await client.execute(uri: "/console/signin?t=\(session)", method: .get).status == .badRequest)
            #expect(try await client.execute(uri: "/console/test/T1", method: .get, headers: [.cookie: "rhea_console=\(session)x"]).status == .unauthorized)
        }
    }

    @Test func onlyAnAdminGetsALinkAndOnlyWhenTheConsoleIsOn() async throws {
        let harness = ConsoleHarness()
        let refused = await harness.ask(user: "bob")
        #expect(refused.kind == .error && refused.body.hasPrefix("Only this team's admins can open the team's web console."))
        #expect(ConsoleHarness.path(of: refused) == nil)
        #expect(await harness.ask("/admin console now").body.contains("`/admin console` takes nothing after it"))

        var off = harness.relay
        off.console = nil
        let reply = await off.handle(Event(platform: "test", team: "T1", channel: "c", user: "ada", text: "/admin console"))
        #expect(reply?.body.contains("The web console is off here") == true)
    }

    @Test func signingOutNeedsTheSessionsCSRFTokenAndEndsTheSession() async throws {
        let harness = ConsoleHarness()
        let path = try #require(ConsoleHarness.path(of: await harness.ask()))
        try await harness.test { client in
            let signIn = try await client.execute(
                uri: "/console/signin", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                body: form(["t": String(path.dropFirst("/console/signin?t=".count))]))
            let cookie = cookieHeader(try #require(signIn.sessionCookie))
            let page = try await client.execute(uri: "/console/test/T1", method: .get, headers: [.cookie: cookie]).text
            let csrf = try #require(page.firstMatch(of: /name="csrf" value="([A-Za-z0-9_-]+)"/)?.1)
            let forged = try await client.execute(
                uri: "/console/signout", method: .post, headers: [.cookie: cookie, .contentType: "application/x-www-form-urlencoded"],
                body: form(["csrf": "AAAA" + csrf.dropFirst(4)]))
            #expect(forged.status == .forbidden)
            #expect(forged.text.contains("This form is out of date"))
            let out = try await client.execute(
                uri: "/console/signout", method: .post, headers: [.cookie: cookie, .contentType: "application/x-www-form-urlencoded"],
                body: form(["csrf": String(csrf)]))
            #expect(out.status == .ok)
            #expect(out.sessionCookie?.hasPrefix("rhea_console=;") == true && out.sessionCookie?.contains("Max-Age=0") == true)
        }
    }

    @Test func everyResponseCarriesTheSecurityHeaders() async throws {
        let harness = ConsoleHarness()
        try await harness.test { client in
            for (uri, method) in [
                ("/console/test/T1", HTTPRequest.Method.get), ("/console/signin?t=x", .get), ("/console/console.css", .get), ("/console/signout", .post),
            ] {
                let response = try await client.execute(uri: uri, method: method)
                let policy = try #require(response.headers[.contentSecurityPolicy], "\(uri)")
                #expect(policy.contains("default-src 'none'") && policy.contains("frame-ancestors 'none'") && !policy.contains("script-src"))
                #expect(response.headers[.xContentTypeOptions] == "nosniff")
                #expect(response.headers[HTTPFields.Element.Name("Referrer-Policy")!] == "no-referrer")
                #expect(response.headers[.cacheControl] == "no-store")
            }
        }
    }

    @Test func onThisMachineOverPlainHTTPTheCookieGoesWithoutSecure() async throws {
        let harness = ConsoleHarness(settings: ConsoleSettings(enabled: true, publicURL: "http://127.0.0.1:8080/"))
        let reply = await harness.ask()
        let link = try #require(reply.body.firstMatch(of: /http:\/\/127\.0\.0\.1:8080\/console\/signin\?t=([A-Za-z0-9._-]+)/)?.1)
        try await harness.test { client in
            let signIn = try await client.execute(
                uri: "/console/signin", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"], body: form(["t": String(link)]))
            let cookie = try #require(signIn.sessionCookie)
            #expect(!cookie.contains("Secure") && cookie.contains("HttpOnly"))
        }
    }
}
