import Foundation
public import Hummingbird
import JWTKit
public import Logging
public import RelayCore
public import RelayPipeline

/// The console's pages under `/console/` (docs/console.md), served by `serve` on its own port.
///
/// Signing in: `/admin console` (or `rhea-relay console-link`) gives a one-time link to
/// `/console/signin?t=…`. Opening it shows a button; pressing it (a POST, so a link preview that
/// fetches the page does not use the link up) claims the link in the store and sets the session
/// cookie. Every page names its team in its path (`/console/<platform>/<team>`) and is shown only
/// to a session of that team.
public struct ConsoleRoutes: Sendable {
    let relay: Relay
    let tokens: ConsoleTokens
    let clock: any RelayClock
    let logger: Logger
    /// Each configured platform's state in words (on, off and why, credentials refused), as
    /// `/readyz`'s detailed report gives it.
    let platformStates: @Sendable () -> [String: String]

    public init(
        relay: Relay, tokens: ConsoleTokens, clock: any RelayClock, logger: Logger, platformStates: @escaping @Sendable () -> [String: String] = { [:] }
    ) {
        self.relay = relay
        self.tokens = tokens
        self.clock = clock
        self.logger = logger
        self.platformStates = platformStates
    }

    static let cookie = "rhea_console"
    /// Forms are a few hundred bytes; a chain import, up to its 20 000 characters URL-encoded.
    static let maxForm = 256 * 1024

    var settings: ConsoleSettings { tokens.settings }

    /// The path pages link to: the public address's own path, then `/console/` (a proxy may
    /// serve the relay under a path of its own).
    var base: String {
        let url = settings.consoleURL
        guard let scheme = url.range(of: "://") else { return "/console/" }
        let afterHost = url[scheme.upperBound...].drop { $0 != "/" }
        return afterHost.isEmpty ? "/console/" : String(afterHost)
    }

    public func add<Context: RequestContext>(to router: Router<Context>) {
        let console = router.group("console")
        console.get("console.css") { _, _ in
            Self.secured(
                Response(status: .ok, headers: [.contentType: "text/css; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: ConsoleStyle.css))))
        }
        console.get("signin") { request, _ in await signInPage(request) }
        console.post("signin") { request, _ in await signIn(request) }
        console.post("signout") { request, _ in await signOut(request) }
        console.get("") { request, _ in await home(request) }
        console.get(":platform/:team") { request, context in
            await teamPage(request, context.parameters, page: .overview)
        }
        console.get(":platform/:team/ledger") { request, context in
            await teamPage(request, context.parameters, page: .ledger)
        }
        console.post(":platform/:team/ledger/mark") { request, context in
            await markLedger(request, context.parameters)
        }
        console.get(":platform/:team/council") { request, context in
            await teamPage(request, context.parameters, page: .council)
        }
        console.get(":platform/:team/connections") { request, context in
            await teamPage(request, context.parameters, page: .connections)
        }
        console.get(":platform/:team/chains") { request, context in
            await teamPage(request, context.parameters, page: .chains)
        }
        console.get(":platform/:team/chains/export") { request, context in
            await exportChains(request, context.parameters)
        }
        for (kind, change) in [("chains", "save"), ("chains", "delete"), ("chains", "import"), ("commands", "add"), ("commands", "remove")] {
            console.post(RouterPath(":platform/:team/\(kind)/\(change)")) { request, context in
                await changeChains(request, context.parameters, change: change)
            }
        }
    }

    // MARK: Signing in and out

    func signInPage(_ request: Request) async -> Response {
        let token = request.uri.queryParameters["t"].map(String.init) ?? ""
        switch await tokens.read(token, as: .link, now: clock.now) {
        case .failure(let refusal): return refused(refusal, session: nil)
        case .success(let claims):
            let body = ConsoleTemplates.render(
                "signin",
                SignInValues(
                    userName: claims.name, team: claims.team, platform: claims.platform, base: base, token: token,
                    minutes: Int(ConsoleTokens.seconds(settings.sessionLifetime) / 60)))
            return page(.ok, title: "Sign in", body: TrustedHTML(html: body), session: nil)
        }
    }

    func signIn(_ request: Request) async -> Response {
        let form: SignInForm
        switch await Self.form(request, as: SignInForm.self) {
        case .failure(let refusal): return refused(refusal, session: nil)
        case .success(let read): form = read
        }
        let now = clock.now
        let claims: ConsoleClaims
        switch await tokens.read(form.t, as: .link, now: now) {
        case .failure(let refusal): return refused(refusal, session: nil)
        case .success(let read): claims = read
        }
        do {
            // Once, on whichever replica: the link's id is claimed in the shared store until
            // after the link has expired anyway.
            let fresh = try await relay.store.claimEvent(key: "console-link:\(claims.jti.value)", expiresAt: claims.exp.value.addingTimeInterval(60), now: now)
            guard fresh else { return refused(.usedLink, session: nil) }
            let session = try await tokens.session(for: claims.grant, now: now)
            var response = Self.secured(Response(status: .seeOther, headers: [.location: teamPath(claims.grant)]))
            response.setCookie(
                Cookie(
                    name: Self.cookie, value: session.token, maxAge: Int(ConsoleTokens.seconds(settings.sessionLifetime)), path: base,
                    secure: !settings.isLoopback, httpOnly: true, sameSite: .strict))
            logger.info(
                "console: signed in", metadata: ["platform": .string(claims.platform), "team": .string(claims.team), "user": .string(claims.sub)])
            return response
        } catch {
            logger.error("console: sign-in failed", metadata: ["error": .string("\(error)")])
            return page(
                .serviceUnavailable, title: "Try again", body: message("The relay's store did not answer; try the link again in a minute."), session: nil)
        }
    }

    func signOut(_ request: Request) async -> Response {
        let session = await self.session(request)
        guard case .success(let claims) = session else { return refused(.noSession, session: nil) }
        do throws(ConsoleRefusal) {
            _ = try await protectedForm(request, as: CSRFForm.self, for: claims)
        } catch {
            return refused(error, session: claims)
        }
        var response = page(
            .ok, title: "Signed out", body: message("You are signed out. `/admin console` in the team's chat signs you in again."), session: nil)
        response.setCookie(
            Cookie(name: Self.cookie, value: "", maxAge: 0, path: base, secure: !settings.isLoopback, httpOnly: true, sameSite: .strict))
        return response
    }

    // MARK: Pages

    func home(_ request: Request) async -> Response {
        switch await session(request) {
        case .failure(let refusal): return refused(refusal, session: nil)
        case .success(let claims): return Self.secured(Response(status: .seeOther, headers: [.location: teamPath(claims.grant)]))
        }
    }

    /// The console's pages, each under its team's path.
    enum Page: String, CaseIterable {
        case overview
        case ledger
        case council
        case chains
        case connections

        var title: String {
            switch self {
            case .overview: "Overview"
            case .ledger: "Ledger"
            case .council: "Council"
            case .chains: "Chains and commands"
            case .connections: "Connections"
            }
        }

        /// Its path under the team's.
        var suffix: String { self == .overview ? "" : "/" + rawValue }
    }

    func teamPage(_ request: Request, _ parameters: Parameters, page: Page) async -> Response {
        let claims: ConsoleClaims
        switch await session(request, for: parameters) {
        case .failure(let refused): return refused.response
        case .success(let read): claims = read
        }
        do {
            let body: TrustedHTML
            switch page {
            case .overview: body = try await OverviewPage(relay: relay, grant: claims.grant, now: clock.now).body()
            case .ledger:
                let query = request.uri.queryParameters["q"].map(String.init) ?? ""
                let marked = request.uri.queryParameters["marked"].flatMap { Int64(String($0)) }
                body = try await LedgerPage(relay: relay, grant: claims.grant, csrf: tokens.csrf(for: claims), base: base).body(query: query, marked: marked)
            case .council: body = try await CouncilPage(relay: relay, grant: claims.grant, now: clock.now).body()
            case .connections: body = try await ConnectionsPage(relay: relay, states: platformStates(), now: clock.now).body()
            case .chains: body = try await ChainsPage(relay: relay, grant: claims.grant, csrf: tokens.csrf(for: claims), base: base).body()
            }
            return self.page(.ok, title: page.title, body: body, session: claims, current: page)
        } catch {
            logger.error("console: a page failed", metadata: ["page": .string(page.rawValue), "error": .string("\(error)")])
            return storeDown(session: claims)
        }
    }

    /// A change to the team's chains or custom commands, made by running the chat command it
    /// stands for as the signed-in admin; the page then shows the relay's answer (a refusal
    /// beside what was typed, kept).
    func changeChains(_ request: Request, _ parameters: Parameters, change: String) async -> Response {
        let claims: ConsoleClaims
        switch await session(request, for: parameters) {
        case .failure(let refused): return refused.response
        case .success(let read): claims = read
        }
        let form: ChangeForm
        do throws(ConsoleRefusal) {
            form = try await protectedForm(request, as: ChangeForm.self, for: claims)
        } catch {
            return refused(error, session: claims)
        }
        guard let line = ChainsPage.commandLine(change, form) else { return refused(.badForm, session: claims) }
        let reply = await relay.handle(
            Event(platform: claims.platform, team: claims.team, channel: "console", user: claims.sub, userName: claims.name, text: line, isAdmin: true))
        let refusedChange = reply == nil || reply?.kind == .error
        var outcome = ChainsPage.Outcome(message: reply?.body ?? "Nothing was changed.", refused: refusedChange)
        if refusedChange {
            switch change {
            case "save": outcome.kept = .init(name: form.name ?? "", source: form.source ?? "")
            case "import": outcome.kept = .init(importText: form.text ?? "")
            case "add": outcome.kept = .init(commandName: form.name ?? "", template: form.template ?? "")
            default: break
            }
        }
        do {
            let body = try await ChainsPage(relay: relay, grant: claims.grant, csrf: tokens.csrf(for: claims), base: base).body(outcome: outcome)
            return page(refusedChange ? .badRequest : .ok, title: Page.chains.title, body: body, session: claims, current: .chains)
        } catch {
            return storeDown(session: claims)
        }
    }

    /// Every chain of the team as a text file of `NAME = blocks` lines.
    func exportChains(_ request: Request, _ parameters: Parameters) async -> Response {
        let claims: ConsoleClaims
        switch await session(request, for: parameters) {
        case .failure(let refused): return refused.response
        case .success(let read): claims = read
        }
        do {
            let text = ChainsPage.export(try await relay.store.chains(team: claims.team))
            var response = Response(
                status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: text)))
            response.headers[.contentDisposition] = "attachment; filename=\"chains.txt\""
            return Self.secured(response)
        } catch {
            return storeDown(session: claims)
        }
    }

    /// Marks a fact-check as `/ledger mark` does, by running that command as the signed-in admin
    /// (the same checks, the same record); then back to the ledger, which shows the mark.
    func markLedger(_ request: Request, _ parameters: Parameters) async -> Response {
        let claims: ConsoleClaims
        switch await session(request, for: parameters) {
        case .failure(let refused): return refused.response
        case .success(let read): claims = read
        }
        let form: MarkForm
        do throws(ConsoleRefusal) {
            form = try await protectedForm(request, as: MarkForm.self, for: claims)
        } catch {
            return refused(error, session: claims)
        }
        guard let verdict = Verdict(rawValue: form.verdict), verdict != .unverifiable else {
            return page(.badRequest, title: "Not marked", body: message("A fact-check is marked true, false or partly."), session: claims)
        }
        // Signed in through a link only an admin (or the operator) could get: an admin here.
        let event = Event(
            platform: claims.platform, team: claims.team, channel: "console", user: claims.sub, userName: claims.name,
            text: "/ledger mark \(form.id) \(verdict.rawValue)", isAdmin: true)
        let reply = await relay.handle(event)
        let ledger = teamPath(claims.grant) + Page.ledger.suffix
        guard let reply, reply.kind != .error else {
            return page(.badRequest, title: "Not marked", body: message(reply?.body ?? "The mark was not recorded."), session: claims)
        }
        let query = form.q.map { "&q=" + ($0.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? "") } ?? ""
        return Self.secured(Response(status: .seeOther, headers: [.location: ledger + "?marked=\(form.id)" + query]))
    }

    // MARK: Helpers

    /// The session, when it is for the team the path names; else the page that says why not.
    func session(_ request: Request, for parameters: Parameters) async -> Result<ConsoleClaims, RefusedPage> {
        let claims: ConsoleClaims
        switch await session(request) {
        case .failure(let refusal): return .failure(RefusedPage(response: refused(refusal, session: nil)))
        case .success(let read): claims = read
        }
        let platform = parameters.get("platform") ?? ""
        let team = parameters.get("team") ?? ""
        let asked = (platform.removingPercentEncoding ?? platform, team.removingPercentEncoding ?? team)
        guard asked == (claims.platform, claims.team) else {
            return .failure(RefusedPage(response: refused(.otherTeam(signedInTo: "\(claims.team) on \(claims.platform)"), session: claims)))
        }
        return .success(claims)
    }

    func session(_ request: Request) async -> Result<ConsoleClaims, ConsoleRefusal> {
        guard let token = request.cookies[Self.cookie]?.value, !token.isEmpty else { return .failure(.noSession) }
        return await tokens.read(token, as: .session, now: clock.now)
    }

    /// `/console/<platform>/<team>` under the public path, each part percent-encoded.
    func teamPath(_ grant: ConsoleGrant) -> String {
        base + Self.segment(grant.platform) + "/" + Self.segment(grant.team)
    }

    static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    func refused(_ refusal: ConsoleRefusal, session: ConsoleClaims?) -> Response {
        let body = ConsoleTemplates.render("refusal", ["message": ConsoleHTML.chatText(refusal.message)])
        return page(HTTPResponse.Status(code: refusal.status), title: refusal.title, body: TrustedHTML(html: body), session: session)
    }

    /// The page when the store did not answer: 503, try again.
    func storeDown(session: ConsoleClaims?) -> Response {
        page(.serviceUnavailable, title: "Try again", body: message("The relay's store did not answer; reload in a minute."), session: session)
    }

    func message(_ text: String) -> TrustedHTML {
        TrustedHTML(html: ConsoleTemplates.render("refusal", ["message": ConsoleHTML.chatText(text)]))
    }

    func page(_ status: HTTPResponse.Status, title: String, body: TrustedHTML, session: ConsoleClaims?, current: Page? = nil) -> Response {
        let values = LayoutValues(
            title: title, base: base,
            signedIn: session.map { claims in
                SignedIn(
                    team: claims.team, platform: claims.platform, userName: claims.name, csrf: tokens.csrf(for: claims),
                    nav: Page.allCases.map { NavLink(href: teamPath(claims.grant) + $0.suffix, label: $0.title, current: $0 == current) })
            }, body: body)
        let html = ConsoleTemplates.render("layout", values)
        return Self.secured(Response(status: status, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: html))))
    }

    /// Every console response: no script or anything from elsewhere, never framed, never cached,
    /// no referrer (a sign-in link's token is in its URL).
    static func secured(_ response: Response) -> Response {
        var response = response
        response.headers[.contentSecurityPolicy] =
            "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[Self.referrerPolicy] = "no-referrer"
        response.headers[.cacheControl] = "no-store"
        response.headers[Self.frameOptions] = "DENY"
        return response
    }

    // Hummingbird re-exports `HTTPFields`, whose element names a header without an import of HTTPTypes.
    static let referrerPolicy = HTTPFields.Element.Name("Referrer-Policy")!
    static let frameOptions = HTTPFields.Element.Name("X-Frame-Options")!

    /// A form of the signed-in session's: read, and its CSRF token checked.
    func protectedForm<Form: ProtectedForm>(_ request: Request, as type: Form.Type, for claims: ConsoleClaims) async throws(ConsoleRefusal) -> Form {
        let form = try await Self.form(request, as: type).get()
        guard tokens.checks(csrf: form.csrf, for: claims) else { throw .badCSRF }
        return form
    }

    /// A form's fields, or why it cannot be read.
    static func form<Form: Decodable>(_ request: Request, as type: Form.Type) async -> Result<Form, ConsoleRefusal> {
        guard request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true else { return .failure(.badForm) }
        guard let buffer = try? await request.body.collect(upTo: maxForm) else { return .failure(.formTooLarge) }
        guard let form = try? URLEncodedFormDecoder().decode(type, from: String(buffer: buffer)) else { return .failure(.badForm) }
        return .success(form)
    }
}

/// The page a request for a team's page gets instead, and why.
struct RefusedPage: Error {
    let response: Response
}

struct SignInForm: Decodable {
    var t: String
}

/// A form that carries the session's CSRF token.
protocol ProtectedForm: Decodable {
    var csrf: String { get }
}

struct CSRFForm: ProtectedForm {
    var csrf: String
}

struct MarkForm: ProtectedForm {
    var csrf: String
    var id: Int64
    var verdict: String
    var q: String?
}

struct SignInValues {
    var userName: String
    var team: String
    var platform: String
    var base: String
    var token: String
    var minutes: Int
}

struct LayoutValues {
    var title: String
    var base: String
    var signedIn: SignedIn?
    var body: TrustedHTML
}

struct SignedIn {
    var team: String
    var platform: String
    var userName: String
    var csrf: String
    var nav: [NavLink]
}

struct NavLink {
    var href: String
    var label: String
    var current: Bool
}
