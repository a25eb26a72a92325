package checkout

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"exactlyonce/internal/tracing"
)

// tracerName is the instrumentation scope of the engine's spans.
const tracerName = "exactlyonce/internal/checkout"

// The engine's spans, one per step of an attempt (the README's order flow),
// each a child of the span of whoever placed the order (the request's) or
// settles it (the completer's):
//
//	checkout.claim        claimKey, with the ClaimOrderKey statement inside
//	provider.create       the PaymentIntent's create, with the HTTP call and
//	                      the provider's own server span inside
//	checkout.store_intent the fenced StoreIntent
//	provider.confirm      the confirm
//	checkout.finish       the finish statement, which enqueues the jobs
//	provider.retrieve     the completer's look at a stored intent
//	provider.cancel       the completer's cancel
const (
	spanClaim       = "checkout.claim"
	spanStoreIntent = "checkout.store_intent"
	spanFinish      = "checkout.finish"
	spanSettle      = "completer.settle"
)

// Attributes of the engine's spans.
const (
	// attrOutcome is what a claim, a finish or a settling came to: the
	// claim and recovery metrics' outcome labels.
	attrOutcome = tracing.AttrOutcome
	// attrResult is a provider call's result, the provider metric's
	// result label.
	attrResult = attribute.Key("exactlyonce.provider.result")
	// attrIntent is the PaymentIntent's id.
	attrIntent = tracing.AttrPaymentIntent
	// attrAttempt counts the completer's takeovers of the key.
	attrAttempt = attribute.Key("exactlyonce.settle_attempt")
)

// noTracer is the engine's tracer when it is given no provider.
func noTracer() trace.Tracer { return tracing.Off().Provider.Tracer(tracerName) }
