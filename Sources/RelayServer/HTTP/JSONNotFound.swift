import Hummingbird
import NIOCore
import RelayCore
import Synchronization

/// A path or method the server has no route for is answered as the Rhea gateway (FastAPI)
/// answers it — `404 {"detail":"Not Found"}` where no route has the path,
/// `405 {"detail":"Method Not Allowed"}` with `Allow` where one has it with another method — so
/// a Rhea client pointed at the relay reads the error it knows instead of an empty body.
///
/// Hummingbird answers both 404; the methods each path has come from the router once every
/// route is registered (`RouteMethods.record`).
struct JSONNotFoundMiddleware<Context: RequestContext>: RouterMiddleware {
    let methods: RouteMethods

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound || error.status == .methodNotAllowed {
            var status = error.status
            var headers = error.headers
            var detail = error.body
            if status == .notFound, let allowed = methods.allowed(for: request.uri.path), !allowed.contains(request.method.rawValue) {
                status = .methodNotAllowed
                headers[.allow] = allowed.joined(separator: ", ")
                detail = nil
            }
            headers[.contentType] = "application/json"
            let body = JSONValue.object(["detail": .string(detail ?? (status == .notFound ? "Not Found" : "Method Not Allowed"))]).serialized()
            return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body ?? Array(#"{"detail":"Not Found"}"#.utf8))))
        }
    }
}

/// The methods each path of the router answers, for `JSONNotFoundMiddleware`. Paths with
/// parameters (`{id}`, `*`) are left out: none of the server's own routes has one, and a wrong
/// method on them keeps its 404.
final class RouteMethods: Sendable {
    private let table = Mutex<[String: [String]]>([:])

    /// Reads the router's routes; called once they are all added.
    func record<Context>(_ router: Router<Context>) {
        var table: [String: [String]] = [:]
        for route in router.routes {
            let path = route.path.description
            guard !path.contains("{"), !path.contains("*"), !path.contains(":") else { continue }
            let normalized = "/" + path.split(separator: "/").joined(separator: "/")
            table[normalized, default: []].append(route.method.rawValue)
        }
        self.table.withLock { $0 = table.mapValues { Array(Set($0)).sorted() } }
    }

    /// The methods `path` has, or nil when no route has it.
    func allowed(for path: String) -> [String]? {
        let normalized = "/" + path.split(separator: "/").joined(separator: "/")
        return table.withLock { $0[normalized] }
    }
}
