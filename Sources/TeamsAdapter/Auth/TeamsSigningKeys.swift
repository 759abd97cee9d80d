import AsyncHTTPClient
import Foundation
import JWTKit
import NIOHTTP1
import RelayCore
import RelayHTTP

/// The keys the Bot Connector signs its tokens with, from the Bot Framework's OpenID metadata:
/// the metadata's `jwks_uri`, then that key set. Fetched when first needed and kept: a token
/// whose `kid` is not among them fetches them again, at most once a minute (a flood of forged
/// `kid`s costs one fetch a minute), and keys older than a day are fetched again at the next
/// token, so a rotation is followed without a restart. Never fetched per request.
///
/// Each key keeps its `endorsements`: the channels (`msteams`) it may sign for.
actor TeamsSigningKeys {
    /// What one fetch found.
    struct KeySet: Sendable {
        /// The metadata's `issuer`: every token's `iss`.
        let issuer: String
        let keys: JWTKeyCollection
        /// Each key's id, with the channels it is endorsed for.
        let endorsements: [String: Set<String>]
        let fetchedAt: Date
    }

    /// What a token's `kid` finds.
    enum Lookup: Sendable {
        case found(KeySet)
        /// Not among the keys, even after fetching them again (or within a minute of a fetch).
        case unknown
        /// The keys could not be fetched, and none are known.
        case unavailable(reason: String)
    }

    /// No fetch sooner than this after the last.
    static let refetchInterval: Duration = .seconds(60)
    /// Keys older than this are fetched again.
    static let maxAge: Duration = .seconds(24 * 3600)
    static let timeout: Duration = .seconds(10)
    static let maxBytes = 1024 * 1024

    private let metadataURL: String
    private let transport: HTTPTransport
    private let clock: any RelayClock
    private var known: KeySet?
    private var lastAttempt: Date?
    private var fetching: Task<Result<KeySet, TeamsKeyFetchError>, Never>?

    init(metadataURL: String, transport: HTTPTransport, clock: any RelayClock) {
        self.metadataURL = metadataURL
        self.transport = transport
        self.clock = clock
    }

    /// The key set that holds `kid`, fetching it again first when the rules above allow.
    func lookUp(kid: String) async -> Lookup {
        let now = clock.now
        if let known, known.endorsements[kid] != nil, now.timeIntervalSince(known.fetchedAt) < Self.maxAge.seconds {
            return .found(known)
        }
        let mayFetch = lastAttempt.map { now.timeIntervalSince($0) >= Self.refetchInterval.seconds } ?? true
        if mayFetch || fetching != nil {
            switch await refresh() {
            case .success(let keys): known = keys
            case .failure(let error) where known == nil: return .unavailable(reason: error.reason)
            case .failure: break
            }
        }
        guard let known, known.endorsements[kid] != nil else { return .unknown }
        return .found(known)
    }

    /// One fetch at a time: tokens that arrive while one runs wait for it.
    private func refresh() async -> Result<KeySet, TeamsKeyFetchError> {
        if let fetching { return await fetching.value }
        lastAttempt = clock.now
        let task = Task { [metadataURL, transport, clock] in
            await Self.fetch(metadataURL: metadataURL, transport: transport, now: clock.now)
        }
        fetching = task
        let result = await task.value
        fetching = nil
        return result
    }

    static func fetch(metadataURL: String, transport: HTTPTransport, now: Date) async -> Result<KeySet, TeamsKeyFetchError> {
        do throws(TeamsKeyFetchError) {
            let metadata = try await get(metadataURL, as: OpenIDMetadata.self, what: "the OpenID metadata", transport: transport)
            guard TeamsServiceURL.isAllowed(metadata.jwksURI) else {
                throw TeamsKeyFetchError("the OpenID metadata's jwks_uri is not an https URL")
            }
            let body = try await getBytes(metadata.jwksURI, what: "the key set", transport: transport)
            let listed: KeyList
            let jwks: JWKS
            do {
                listed = try JSONDecoder().decode(KeyList.self, from: Data(body))
                jwks = try JSONDecoder().decode(JWKS.self, from: Data(body))
            } catch {
                throw TeamsKeyFetchError("the key set is not a JWK set")
            }
            let keys = JWTKeyCollection()
            var endorsements: [String: Set<String>] = [:]
            for (jwk, entry) in zip(jwks.keys, listed.keys) {
                // Only RSA signing keys with an id: a key of another kind is skipped, not fatal.
                guard let kid = entry.kid, entry.kty == "RSA", (try? await keys.add(jwk: jwk)) != nil else { continue }
                endorsements[kid] = Set(entry.endorsements ?? [])
            }
            guard !endorsements.isEmpty else { throw TeamsKeyFetchError("the key set holds no RSA key with an id") }
            return .success(KeySet(issuer: metadata.issuer, keys: keys, endorsements: endorsements, fetchedAt: now))
        } catch {
            return .failure(error)
        }
    }

    private static func get<T: Decodable>(_ url: String, as type: T.Type, what: String, transport: HTTPTransport) async throws(TeamsKeyFetchError) -> T {
        let body = try await getBytes(url, what: what, transport: transport)
        do throws(PayloadProblem) {
            return try PayloadDecoding.json(type, from: body, as: what)
        } catch {
            throw TeamsKeyFetchError(error.description)
        }
    }

    private static func getBytes(_ url: String, what: String, transport: HTTPTransport) async throws(TeamsKeyFetchError) -> [UInt8] {
        var request = HTTPClientRequest(url: url)
        request.method = .GET
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "rhea-relay")
        let answer: HTTPAnswer
        do throws(HTTPFailure) {
            answer = try await transport.exchange(request, timeout: timeout, maxBodyBytes: maxBytes)
        } catch {
            throw TeamsKeyFetchError("\(what) could not be fetched (\(error.label))")
        }
        guard answer.isSuccess else { throw TeamsKeyFetchError("\(what) could not be fetched (HTTP \(answer.status))") }
        return answer.body
    }

    /// The OpenID metadata's two fields the relay reads.
    struct OpenIDMetadata: Decodable {
        var issuer: String
        var jwksURI: String

        enum CodingKeys: String, CodingKey {
            case issuer
            case jwksURI = "jwks_uri"
        }
    }

    /// The key set as the Bot Framework publishes it, for what jwt-kit's `JWK` does not keep.
    struct KeyList: Decodable {
        struct Entry: Decodable {
            var kty: String?
            var kid: String?
            var endorsements: [String]?

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                kty = container.lenient(String.self, .kty)
                kid = container.lenient(String.self, .kid)
                endorsements = container.lenient([String].self, .endorsements)
            }

            enum CodingKeys: String, CodingKey { case kty, kid, endorsements }
        }

        var keys: [Entry]
    }
}

/// Why the signing keys could not be fetched: one line, never a URL.
struct TeamsKeyFetchError: Error, Sendable {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
