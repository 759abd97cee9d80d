import Hummingbird
import NIOCore
import RelayCore

/// A path or method the server has no route for is answered as the Rhea gateway (FastAPI)
/// answers it — `404 {"detail":"Not Found"}`, `405 {"detail":"Method Not Allowed"}` — so a
/// Rhea client pointed at the relay reads the error it knows instead of an empty body.
struct JSONNotFoundMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound || error.status == .methodNotAllowed {
            let detail = error.body ?? (error.status == .notFound ? "Not Found" : "Method Not Allowed")
            var headers = error.headers
            headers[.contentType] = "application/json"
            let body = JSONValue.object(["detail": .string(detail)]).serialized() ?? Array(#"{"detail":"Not Found"}"#.utf8)
            return Response(status: error.status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
    }
}
