/*
 * The order protocol of exactlyonce, for the SPIN model checker.
 *
 * One customer and one idempotency key. Requests claim the key, pay the
 * provider under a lease the Stripe way (create the operation's
 * PaymentIntent with the key derived from the operation, store its id in
 * the key's row with a statement fenced by the lock token, confirm it by
 * its id) and finish with a guarded write; the completer (retrieve and
 * cancel by the stored id; without one, the create sent again to learn the
 * id and cancel it, or past the provider's key window no call at all), the
 * reconciler and the sweeper work beside them; any process may stall or
 * crash at any step, and a confirm may reach the provider late, even after
 * the intent was canceled, when it charges nothing. A confirm may also
 * leave the intent requires_action (nothing charged; the shop cancels it,
 * or, for a request that gave a return URL, parks the key awaiting the
 * shopper's authentication at their bank: SCA below) or processing
 * (nothing charged yet; the provider decides it later, on its own, and the
 * shop leaves the key started until it has).
 * docs/model.md maps each step to the Go function or SQL statement it
 * stands for, says what is abstracted away and how to read a trail.
 *
 * Three configurations of this one text are checked (model_test.go):
 *
 *   default  the key used by two purchases: the first, then a second once
 *            the sweeper has deleted the first's key; two requests each.
 *   LONG     one purchase with three requests and a retry window long
 *            enough for a retry to take the key back from a stalled
 *            completer, and to meet an answer another request remembered.
 *   SCA      3-D Secure: one purchase with two requests that give a return
 *            URL, so that a confirm left requires_action parks the key
 *            awaiting authentication; the bank (the shopper completes or
 *            fails the authentication once, or never), and the shopper's
 *            return, the provider's webhook and the completer's window
 *            cancel racing to settle the key (SettleKey, Completer).
 *
 * Each MUT_* macro switches one safeguard off; the tests check that each
 * of them breaks the invariant it guards, and how.
 *
 * Time is the database's clock, in ticks (Clock). Every duration is held as
 * the ticks left or passed, saturating where nothing compares beyond, so
 * that states differing only in the absolute time are one state.
 */

/* Durations, in ticks. */
#define LEASE    2   /* LOCK_TIMEOUT: a claim, takeover or renewal holds the key this long */
#define FENCE    1   /* FenceAt(LEASE): three quarters of it, rounded down; below LEASE */
#define GRACE    2   /* COMPLETER_GRACE: the completer leaves a new key to its client this long */
#ifdef LONG
#define WINDOW   4   /* a purchase's requests reach the shop within WINDOW of its first */
#define RETAIN   4   /* KEY_RETENTION, counted from the finish (Sweep: finished_at < now() - keep) */
#else
#define WINDOW   2
#define RETAIN   2
#endif
#ifdef MUT_REMEMBER_LONG
#define REMEMBER (RETAIN + 2)  /* mutation: answers remembered beyond the retention */
#else
#define REMEMBER 1   /* rememberFor; WINDOW + REMEMBER <= RETAIN + 1, so no answer outlives its row */
#endif
#ifdef MUT_SWEEP_STARTED
#define AGECAP   (RETAIN + 1)
#else
#define AGECAP   GRACE   /* only ever compared with GRACE */
#endif

/* Attempt slots: requests 0 and 1 are the first purchase (the same request
 * twice, at once or as a retry), and 2 a third in LONG; 3 and 4 the second
 * purchase, in the default configuration; 5 is the completer. The macros below spell out what holds for every request slot. */
#define NREQ  5
#define COMP  5
#ifdef SCA
#define RET   6   /* the shopper's return from the bank (SettleKey) */
#define HOOK  7   /* the webhook on the intent's decision (SettleKey) */
#define NSLOT 8
#else
#define NSLOT 6
#endif
#define ANY_REQ(P)     (P(0) || P(1) || P(2) || P(3) || P(4))
#define ALL_REQ(P)     (P(0) && P(1) && P(2) && P(3) && P(4))
#define ANY_REQ2(P, a) (P(0, a) || P(1, a) || P(2, a) || P(3, a) || P(4, a))
#define EACH_REQ(S)    S(0); S(1); S(2); S(3); S(4)

/* The two shop instances, each with its own remembered answers. */
#define X 0
#define Y 1

/* One set of names, so that trails print them: an attempt's phase, a stored
 * answer, a provider outcome, and the invariants the asserts check. */
mtype = {
	IDLE, CREATING, LEASED, FINISHING,
	REQUEST, COMPLETER, RETURN, WEBHOOK,
	NOANSWER, CREATED, DECLINED, NOT_COMPLETED,
	NOCHARGE, SUCCEEDED, DECLINED_CHARGE, CANCELED, ACTION, PROCESSING, AWAITING,
	ONE_ORDER_PER_KEY, ONE_CHARGE_PER_PURCHASE, CHARGE_HAS_ORDER_OR_REFUND,
	CREATED_NAMES_AN_ORDER, NO_CHARGE_IS_FINAL, NEVER_SWEPT_STARTED, ORDER_HAS_CHARGE
};

/* The key row (idem_keys with its order_keys row), judged by the database clock. */
bool k_exists;
bool k_finished;
byte k_op;        /* operation_id: new each time the row is created */
byte k_token;     /* lock_token: new at every claim and takeover */
byte k_lease;     /* locked_until - now(); 0 once it ran out */
byte k_age;       /* now() - created_at, saturating at AGECAP */
byte k_finage;    /* now() - finished_at, saturating at RETAIN + 1 */
mtype k_ans = NOANSWER;  /* response_status and response_body */
byte k_ansop;     /* the operation whose outcome the stored answer tells */
bool k_hasid;     /* payment_intent_id: the operation's intent, stored before it is confirmed */
bool k_await;     /* awaiting_authentication_at (with authenticate_url): the shopper was sent to their bank */

/* Operations are numbered as they are created; operation o's provider key
 * is derived from o (checkout.ProviderKey), and so is its PaymentIntent,
 * the one the create with that key makes (Stripe replays it to a create
 * sent again), and its confirm's key (checkout.ConfirmKey): the provider's
 * state is kept per operation. */
byte nextop;
byte opgen[3];    /* the purchase whose request created each operation */

/* The provider: each operation's intent, decided once by its first confirm
 * (succeeded, or declined by the bank; a confirm again replays it), or
 * canceled first, after which a confirm charges nothing; refunds. A first
 * confirm may also leave the intent requires_action (p_action: the bank
 * asks for 3-D Secure), answered as a success is (HTTP 200) but charging
 * nothing; a confirm again replays that. Without a return URL (the default
 * and LONG configurations) only a cancel ends it: the bank's page has no
 * way back. With one (SCA), the shopper's bank may also decide it, once
 * (Bank), after the shop sent the shopper there. Or it may leave
 * the intent processing (p_proc: the money is on its way), answered 200 as
 * well, charging nothing yet: the provider decides it later on its own,
 * succeeded or failed (a decline), and until then a confirm again replays
 * processing and a cancel is refused. Whether the intent exists is not
 * kept: creating one charges nothing, and a confirm is sent only for an
 * intent whose create was answered. */
mtype p_charge[3] = NOCHARGE;
bool p_canceled[3];
bool p_action[3];
bool p_proc[3];
bool p_refunded[3];

/* 3-D Secure (SCA): the shopper's returns from the bank still to come (each
 * one that finds the key to settle takes it), and the webhook of the bank's
 * decision, sent and not yet delivered. */
#ifdef SCA
#define RETURNS 2
#else
#define RETURNS 0
#endif
byte returns = RETURNS;
byte hookop;      /* the operation whose intent the undelivered webhook is about; 0 for none */

/* The shop's orders, counted by the operation whose charge each holds. */
byte orders[3];

/* Confirms on the wire: sent by a request, processed by the provider at
 * any later time, even after the request gave up or died. (A create's
 * answer is waited for in the phase CREATING; a create that lands after
 * its request ended changes nothing that matters: it makes an intent
 * nobody confirms.) */
bool wire[NREQ];
byte wireop[NREQ];
mtype resp[NREQ] = NOCHARGE;  /* the provider's answer, while its request waits */

/* What each attempt is doing, for the clock, the checks and the claims. */
mtype a_phase[NSLOT] = IDLE;
byte a_tok[NSLOT];
byte a_op[NSLOT];
byte a_fence[NSLOT];   /* ticks until the self-fence fires */
bool a_stalled[NSLOT];

/* The remembered answers of each instance (idem.Answers). */
bool c_valid[2];
mtype c_ans[2] = NOANSWER;
byte c_ansop[2];
byte c_left[2];   /* ticks until the entry expires */

/* Ghosts: what the checks and claims read, and the run's bookkeeping. */
byte chargesof[3];            /* succeeded charges made for each purchase */
mtype firstans[3] = NOANSWER; /* the first answer stored for each operation */
byte firstansop[3];
byte purchase = 1;            /* the purchase the client is making */
byte clientage;               /* ticks since it began, saturating at WINDOW + 1 */
byte live;                    /* attempts running: sent, or taken by the completer */
bool swept;                   /* the sweeper has deleted the key */
bool over;                    /* the final checks ran: the background processes stop */
mtype broken;                 /* set only by a failing check, for the trail */
bool landable;                /* scratch: set, read and cleared within one step */

inline check(cond, inv) {
	if
	:: !(cond) -> broken = inv; printf("MODEL: invariant %e violated\n", inv); assert(broken != inv)
	:: else -> skip
	fi
}

/* Whether a succeeded charge under operation o exists, or can still be
 * made: o is processing (the provider may still make it succeed), or, in
 * SCA, requires_action and not canceled (the shopper may still complete the
 * authentication at their bank), or a
 * confirm of o is on the wire while o is neither charged, declined,
 * canceled nor requires_action at the provider. (A request still waiting
 * on its create can confirm only after its fenced store, which no request
 * of a key that has an answer can make.) */
#define ON_WIRE(j, o) (wire[j] && wireop[j] == o)
#define PENDING(o) ANY_REQ2(ON_WIRE, o)
#ifdef SCA
#define BANK_MAY(o) (p_action[o] && !p_canceled[o])  /* the bank may still complete it */
#else
#define BANK_MAY(o) false
#endif
#define CAN_LAND(o) (p_charge[o] == SUCCEEDED || p_proc[o] || BANK_MAY(o) || \
	(p_charge[o] == NOCHARGE && !p_canceled[o] && !p_action[o] && PENDING(o)))
#define CAN_LAND_FOR(g) ((opgen[1] == g && CAN_LAND(1)) || (opgen[2] == g && CAN_LAND(2)))

/* A request of purchase gen is answered ans, the outcome of operation ansop:
 * a 201 names an order that exists, and "nothing was charged" (a decline,
 * payment-not-completed) holds for good for the purchase. */
inline told(gen, ans, ansop) {
	printf("MODEL:   the client of purchase %d is told %e (the outcome of operation %d)\n", gen, ans, ansop);
	if
	:: ans == CREATED -> check(orders[ansop] > 0, CREATED_NAMES_AN_ORDER)
	:: ans == DECLINED || ans == NOT_COMPLETED ->
		landable = CAN_LAND_FOR(gen); check(!landable, NO_CHARGE_IS_FINAL); landable = false
	:: else -> skip
	fi
}

/* A request waits on a provider call: its create, or its confirm. */
#define WAITING(i) (a_phase[i] == CREATING || a_phase[i] == LEASED)

/* LTL lease_covers_calls: a request that is running (not paused) while it
 * waits on its provider call holds the key, with a lease that has not run
 * out. The self-fence is what keeps it true. */
#define COVERED(i) (!WAITING(i) || a_stalled[i] || \
	(k_exists && k_token == a_tok[i] && k_lease > 0))
ltl lease_covers_calls { [] ALL_REQ(COVERED) }

/* LTL answer_is_final: a finished key keeps the answer first stored for its
 * operation, for as long as the row lives. */
ltl answer_is_final { [] (!(k_exists && k_finished) ||
	(k_ans == firstans[k_op] && k_ansop == firstansop[k_op])) }

/* The fence is a timer: time does not pass the moment it fires while its
 * attempt runs. A paused process holds nothing back. */
#define OVERDUE(i) (WAITING(i) && !a_stalled[i] && a_fence[i] == 0)
#ifdef MUT_NO_FENCE
#define CLOCK_MAY_TICK true
#else
#define CLOCK_MAY_TICK (!ANY_REQ(OVERDUE))
#endif

inline tickslot(i) {
	if
	:: WAITING(i) && a_fence[i] > 0 -> a_fence[i]--
	:: else -> skip
	fi
}

inline tickcache(x) {
	if
	:: c_left[x] > 1 -> c_left[x]--
	:: c_left[x] == 1 -> c_left[x] = 0; c_valid[x] = false; c_ans[x] = NOANSWER; c_ansop[x] = 0
	:: else -> skip
	fi
}

proctype Clock() {
end:	do
	:: atomic { !over && CLOCK_MAY_TICK ->
		if
		:: k_exists && k_lease > 0 -> k_lease--
		:: else -> skip
		fi;
		if
		:: k_exists && k_age < AGECAP -> k_age++
		:: else -> skip
		fi;
		if
		:: k_exists && k_finished && k_finage <= RETAIN -> k_finage++
		:: else -> skip
		fi;
		if
		:: clientage <= WINDOW -> clientage++
		:: else -> skip
		fi;
		EACH_REQ(tickslot);
		tickcache(X); tickcache(Y);
		printf("MODEL: tick (lease left %d, key age %d, since finish %d)\n", k_lease, k_age, k_finage)
	}
	od
}

/* A confirm whose request has ended, for an operation the provider has
 * decided (charged, declined or canceled) or left requires_action or
 * processing, can change nothing any more when it lands (it is answered
 * what the intent is, or replayed the first confirm's answer): it is
 * dropped at once, so that the states where it is still on the wire and
 * those where it has landed are one. */
#define DECIDED(o) (p_charge[o] != NOCHARGE || p_canceled[o] || p_action[o] || p_proc[o])
inline forgetslot(j) {
	if
	:: wire[j] && a_phase[j] == IDLE && DECIDED(wireop[j]) -> wire[j] = false; wireop[j] = 0
	:: else -> skip
	fi
}
inline forget() {
	EACH_REQ(forgetslot)
}

/* The provider processes a confirm (fakestripe's confirmIntent, under the
 * confirm key's idempotency and the intent's row lock): a canceled intent
 * charges nothing (payment_intent_unexpected_state); an intent decided
 * before answers that again (the confirm key's replay, or its succeeded
 * state), and so does one left requires_action or processing; otherwise
 * the bank succeeds or declines, once per operation, or asks for 3-D
 * Secure (requires_action, nothing charged), or the payment goes
 * processing (nothing charged yet). */
inline land(j) {
	o = wireop[j];
	if
	:: p_canceled[o] -> r = CANCELED
	:: !p_canceled[o] && p_action[o] -> r = ACTION
	:: !p_canceled[o] && p_proc[o] -> r = PROCESSING
	:: !p_canceled[o] && p_charge[o] != NOCHARGE -> r = p_charge[o]
	:: !p_canceled[o] && !p_action[o] && !p_proc[o] && p_charge[o] == NOCHARGE ->
		if
		:: p_charge[o] = SUCCEEDED; chargesof[opgen[o]]++;
			check(chargesof[opgen[o]] <= 1, ONE_CHARGE_PER_PURCHASE);
			r = SUCCEEDED
		:: p_charge[o] = DECLINED_CHARGE; r = DECLINED_CHARGE
		:: p_action[o] = true; r = ACTION
		:: p_proc[o] = true; r = PROCESSING
		fi
	fi;
	printf("MODEL: provider: the confirm of request %d for operation %d lands: %e\n", j, o, r);
	wire[j] = false; wireop[j] = 0;
	/* A request still waiting gets the answer; a paused one finds it when
	 * it resumes. */
	if
	:: a_phase[j] == LEASED -> resp[j] = r;
		if
		:: !a_stalled[j] -> a_phase[j] = FINISHING
		:: else -> skip
		fi
	:: else -> skip
	fi;
	o = 0; r = NOCHARGE;
	forget()
}

/* The provider decides a processing intent on its own, at any time
 * (fakestripe's moveOn): the payment succeeds, a charge counted and checked
 * as a first confirm's is, or fails, which Stripe reports as a decline
 * (requires_payment_method with the error). */
inline decide(d) {
	p_proc[d] = false;
	if
	:: p_charge[d] = SUCCEEDED; chargesof[opgen[d]]++;
		check(chargesof[opgen[d]] <= 1, ONE_CHARGE_PER_PURCHASE)
	:: p_charge[d] = DECLINED_CHARGE
	fi;
	printf("MODEL: provider: operation %d's intent, processing, is decided: %e\n", d, p_charge[d])
}

proctype Provider() {
	byte o;
	mtype r = NOCHARGE;
end:	do
	:: atomic { !over && wire[0] -> land(0) }
	:: atomic { !over && wire[1] -> land(1) }
	:: atomic { !over && wire[2] -> land(2) }
	:: atomic { !over && wire[3] -> land(3) }
	:: atomic { !over && wire[4] -> land(4) }
	:: atomic { !over && p_proc[1] -> decide(1) }
	:: atomic { !over && p_proc[2] -> decide(2) }
	od
}

/* The shopper at their bank's 3-D Secure page (fakestripe's
 * authenticate3DS), once the shop has recorded that the operation waits
 * for it and so shown the shopper the way (AwaitAuthentication): the first
 * submission decides the intent, if it still requires_action and is not
 * canceled, under the intent's row lock, one at a time with the confirms
 * and the cancels: completed, the charge (counted and checked as a first
 * confirm's); failed, requires_payment_method with the authentication
 * failure, which the shop reads as a decline. Either sends the webhook. A
 * second submission changes nothing (but sends the shopper back again: the
 * second of RETURNS); the shopper may also never come. */
proctype Bank() {
	byte o;
end:	do
	:: atomic { !over && k_exists && k_await && p_action[k_op] && !p_canceled[k_op] ->
		o = k_op; p_action[o] = false;
		if
		:: p_charge[o] = SUCCEEDED; chargesof[opgen[o]]++;
			check(chargesof[opgen[o]] <= 1, ONE_CHARGE_PER_PURCHASE)
		:: p_charge[o] = DECLINED_CHARGE
		fi;
		hookop = o;
		printf("MODEL: bank: the shopper authenticates operation %d's intent: %e\n", o, p_charge[o]);
		o = 0 }
	od
}

/* The completer's retrieve and cancel of an operation's intent by its id,
 * decided by the provider one at a time with every confirm of the intent:
 * the intent's outcome if it was decided (Stripe refuses to cancel a
 * succeeded intent and the client returns it; a declined one is canceled
 * and keeps its decline), PROCESSING if it is processing (the retrieve
 * finds it so, and the cancel is refused: Stripe cancels a processing
 * intent only in rare cases, the fake never), or else the intent canceled,
 * so that no confirm charges it. The retrieve before the cancel only
 * spares a call, so the two are one step. The mutation retrieves and takes
 * "not confirmed yet" for "never".  */
inline cancel(co, cgot) {
	if
	:: p_charge[co] != NOCHARGE -> cgot = p_charge[co]
	:: p_proc[co] -> cgot = PROCESSING
	:: else ->
#ifndef MUT_COMPLETER_LOOKS
		p_canceled[co] = true;
#endif
		cgot = CANCELED
	fi
}

/* The guarded finish (idem_finish in FinishOrder or FinishKey): writes only
 * while the key is started and carries this attempt's lock token. */
#ifdef MUT_FINISH_NO_TOKEN
#define MAY_FINISH(i) (k_exists && !k_finished)
#else
#define MAY_FINISH(i) (k_exists && !k_finished && k_token == a_tok[i])
#endif

inline finish(i, fgot, role, gen) {
	if
	:: MAY_FINISH(i) ->
		k_finished = true; k_finage = 0; k_ansop = a_op[i];
		if
		:: fgot == SUCCEEDED -> k_ans = CREATED
		:: fgot == DECLINED_CHARGE -> k_ans = DECLINED
		:: fgot == CANCELED -> k_ans = NOT_COMPLETED
		fi;
		if
		:: role == REQUEST -> printf("MODEL: request %d finishes the key (operation %d): stores %e\n", i, k_op, k_ans)
		:: else -> printf("MODEL: %e finishes the key (operation %d): stores %e\n", role, k_op, k_ans)
		fi;
		if
		:: fgot == SUCCEEDED -> orders[a_op[i]]++; check(orders[a_op[i]] <= 1, ONE_ORDER_PER_KEY);
			check(p_charge[a_op[i]] == SUCCEEDED, ORDER_HAS_CHARGE)
		:: else -> skip
		fi;
		if
		:: firstans[k_op] == NOANSWER -> firstans[k_op] = k_ans; firstansop[k_op] = k_ansop
		:: else -> skip
		fi;
		/* The shopper back from the bank is shown the status page: the
		 * answer just stored. */
		if
		:: role == REQUEST -> told(gen, k_ans, k_ansop)
		:: role == RETURN -> told(opgen[k_op], k_ans, k_ansop)
		:: else -> skip
		fi
	:: else ->
		if
		:: role == REQUEST -> printf("MODEL: request %d finishes too late: nothing written (409 request-superseded)\n", i)
		:: else -> printf("MODEL: %e finishes too late: nothing written\n", role)
		fi
	fi
}

/* A new lock token: the smallest one no attempt holds. Tokens are only ever
 * compared for equality, so any value no live attempt holds is as new as a
 * random UUID, and numbering them this way keeps their history out of the
 * state. */
#ifdef SCA
#define HELD_BY_SETTLEKEY (k_token == a_tok[RET] || k_token == a_tok[HOOK])
#else
#define HELD_BY_SETTLEKEY false
#endif
inline newtoken() {
	k_token = 1;
	do
	:: k_token == a_tok[0] || k_token == a_tok[1] || k_token == a_tok[2] ||
	   k_token == a_tok[3] || k_token == a_tok[4] || k_token == a_tok[5] || HELD_BY_SETTLEKEY -> k_token++
	:: else -> break
	od
}

/* The completer settles operation so at the provider (settleIntent). With
 * the intent's id stored: retrieve, cancel; an intent processing is found
 * so, and sgot is PROCESSING (errProcessing). Without: the intent was never
 * confirmed (a confirm is sent only after the fenced store). Within the
 * provider's key window the completer sends the create again, which Stripe
 * replays, to learn the id and cancel the intent; past it, it makes no call.
 * The model does not know the key's age against the window (24 h): either
 * may happen. */
inline settleintent(so, sgot, wait) {
	if
#ifdef SCA
	/* The stored intent requires_action for a key awaiting its shopper
	 * (c.awaited), within the AUTHENTICATION_WINDOW: left for the shopper
	 * (errAwaitingAuthentication). The window is not a number: at any
	 * judgement the key may be within it or past it, where the intent is
	 * canceled as below; the completer's last pass, at quiescence, is past
	 * it (wait false). The mutation takes the window's end for the end of
	 * the bank's page: it finishes the key not completed without the
	 * cancel. */
	:: wait && k_hasid && k_await && p_action[so] && !p_canceled[so] -> sgot = AWAITING;
		printf("MODEL: settling: operation %d's intent still requires_action, within the window: the shopper may still be at their bank\n", so)
#ifdef MUT_WINDOW_NO_CANCEL
	:: k_hasid && k_await && p_action[so] && !p_canceled[so] -> sgot = CANCELED;
		printf("MODEL: settling: operation %d's intent still requires_action, past the window: taken for abandoned, without the cancel\n", so)
	:: k_hasid && !(k_await && p_action[so] && !p_canceled[so]) -> cancel(so, sgot);
		printf("MODEL: settling: retrieves the stored intent of operation %d, cancelling it if it can still be confirmed: %e\n", so, sgot)
#else
	:: k_hasid -> cancel(so, sgot);
		printf("MODEL: settling: retrieves the stored intent of operation %d (past the window if it awaits the shopper), cancelling it if it can still be confirmed: %e\n", so, sgot)
#endif
	:: !k_hasid -> cancel(so, sgot);
		printf("MODEL: settling: sends operation %d's create again (within the key window), learns its intent and cancels it if it can still be confirmed: %e\n", so, sgot)
#elif !defined(MUT_COMPLETER_LOOKS)
	:: k_hasid -> cancel(so, sgot);
		printf("MODEL: completer retrieves the stored intent of operation %d, cancelling it if it can still be confirmed: %e\n", so, sgot)
	:: !k_hasid -> cancel(so, sgot);
		printf("MODEL: completer sends operation %d's create again (within the key window), learns its intent and cancels it if it can still be confirmed: %e\n", so, sgot)
#else
	:: k_hasid -> cancel(so, sgot);
		printf("MODEL: completer retrieves the stored intent of operation %d, and takes what it finds for final: %e\n", so, sgot)
	:: !k_hasid -> cancel(so, sgot);
		printf("MODEL: completer sends operation %d's create again (within the key window), learns its intent and retrieves it: %e\n", so, sgot)
#endif
	:: !k_hasid -> sgot = CANCELED;
		printf("MODEL: completer finds no stored intent for operation %d, past the key window: no call\n", so)
	fi
}

inline clear(i) {
	a_phase[i] = IDLE; a_tok[i] = 0; a_op[i] = 0; a_fence[i] = 0; a_stalled[i] = false
}

/* A request ends, in the same step as what ended it, so that no state
 * shows it still waiting once it has given up. */
inline leave(i) {
	clear(i); resp[i] = NOCHARGE; got = NOCHARGE; live--; forget()
}

/* A request's create was answered: it stores the intent's id in the key's
 * row, fenced by its token and its lease (StoreIntent: lock_token = <mine>
 * AND locked_until > now()), and confirms it by its id, under the
 * operation's confirm key. A request that was taken over, or whose lease
 * ran out while it was paused, stores nothing and never confirms. The
 * mutation confirms anyway. */
inline store(i) {
	if
	:: k_exists && !k_finished && k_token == a_tok[i] && k_lease > 0 ->
		k_hasid = true; a_phase[i] = LEASED; wire[i] = true; wireop[i] = a_op[i];
		printf("MODEL: request %d: operation %d's intent is created; it stores its id and confirms it\n", i, a_op[i])
	:: else ->
#ifdef MUT_CONFIRM_UNSTORED
		wire[i] = true; wireop[i] = a_op[i];
		printf("MODEL: request %d: its store finds the key taken over or its lease run out, and it confirms operation %d's intent anyway\n", i, a_op[i]);
#else
		printf("MODEL: request %d: its store finds the key taken over or its lease run out: no confirm (409 request-superseded)\n", i);
#endif
		leave(i); goto gone
	fi
}

/* One request of purchase gen, on instance inst, in slot i. */
proctype Request(byte i; byte gen; byte inst) {
	mtype got = NOCHARGE;

	/* The client sends the request within its purchase's retry window, or
	 * never: a request not sent waits here for good, which is a valid end.
	 * The second purchase's requests go out only once the sweeper has
	 * deleted the first's key. Then Recall, ClaimOrderKey (and Resume, under
	 * FOR UPDATE, for a takeover), and the first provider call: the create
	 * of the operation's intent with the operation's provider key, or, when
	 * a takeover finds the intent's id stored, its confirm. */
end:	atomic { !over && gen >= purchase && (gen == 1 || swept) && (gen > purchase || clientage <= WINDOW) ->
		live++;
		if
		:: gen > purchase -> purchase = gen; clientage = 0;
			printf("MODEL: the client starts purchase %d with the same key\n", gen)
		:: else -> skip
		fi;
		if
		:: c_valid[inst] ->
			printf("MODEL: request %d (purchase %d, instance %c) is answered from memory\n", i, gen, 88 + inst);
			told(gen, c_ans[inst], c_ansop[inst]); leave(i); goto gone
		:: else -> skip
		fi;
		if
		:: !k_exists ->
			nextop++; newtoken();
			k_exists = true; k_finished = false; k_op = nextop;
			k_lease = LEASE; k_age = 0; k_finage = 0; k_ans = NOANSWER; k_ansop = 0; k_hasid = false;
			opgen[nextop] = gen;
			printf("MODEL: request %d (purchase %d, instance %c) claims a new key: operation %d, token %d\n",
				i, gen, 88 + inst, k_op, k_token)
		:: k_exists && k_finished ->
			printf("MODEL: request %d (purchase %d, instance %c) replays the stored answer and remembers it\n",
				i, gen, 88 + inst);
			c_valid[inst] = true; c_ans[inst] = k_ans; c_ansop[inst] = k_ansop; c_left[inst] = REMEMBER;
			told(gen, k_ans, k_ansop); leave(i); goto gone
		:: k_exists && !k_finished && k_lease > 0 ->
			printf("MODEL: request %d finds the key locked: 409 request-in-progress\n", i);
			leave(i); goto gone
		:: k_exists && !k_finished && k_lease == 0 ->
			newtoken(); k_lease = LEASE;
			printf("MODEL: request %d (purchase %d, instance %c) takes the key over: operation %d, token %d\n",
				i, gen, 88 + inst, k_op, k_token)
		fi;
		a_tok[i] = k_token; a_op[i] = k_op; a_fence[i] = FENCE;
		if
		:: k_hasid -> a_phase[i] = LEASED; wire[i] = true; wireop[i] = k_op;
			printf("MODEL: request %d confirms the stored intent of operation %d\n", i, k_op)
		:: else -> a_phase[i] = CREATING;
			printf("MODEL: request %d creates operation %d's intent\n", i, k_op)
		fi
	}

	/* Waiting on the provider under the lease (withLease, KeepLease): on
	 * the create until its answer comes and the request stores the id, then
	 * on the confirm until its answer lands (Provider), or until the wait
	 * ends. */
	do
	:: atomic { a_phase[i] == CREATING && !a_stalled[i] -> store(i) }
	:: atomic { a_phase[i] == FINISHING ->
		got = resp[i]; resp[i] = NOCHARGE;
		printf("MODEL: request %d got %e from the provider\n", i, got);
		/* A confirm answered 200 that charged nothing (requires_action) is
		 * canceled at the provider under the operation's cancel key, and
		 * then finished as what the cancel found (settleConfirmed). The
		 * cancel and the finish are one step here: a crash between them
		 * leaves the key started with the intent canceled, which the
		 * completer settles as it settles a crash before the cancel. The
		 * mutation takes the 200 for a charge.
		 *
		 * In SCA the request gave a return URL: it retrieves the intent, in
		 * the same step (the answer may be a replay of the first confirm's,
		 * and the shopper may have been to their bank since): decided, it
		 * finishes as that; canceled, not completed; still requires_action
		 * while the key awaits its shopper past the window (the window is
		 * not a number: that may be at any time), canceled as above;
		 * otherwise it parks the operation (awaitAuthentication): the wait
		 * and the bank's page recorded in the key's row, fenced by the
		 * token alone (AwaitAuthentication), and the key handed back (its
		 * lease ended, Expire), or a crash between the two, which leaves
		 * the lease to run out. The client is told 202 with the bank's
		 * page: nothing final. */
		if
		:: got == ACTION ->
#ifdef MUT_ACTION_PAID
			got = SUCCEEDED;
			printf("MODEL: request %d takes operation %d's requires_action for paid\n", i, a_op[i])
#elif defined(SCA)
			if
			:: p_canceled[a_op[i]] -> got = CANCELED;
				printf("MODEL: request %d retrieves operation %d's intent: canceled\n", i, a_op[i])
			:: !p_canceled[a_op[i]] && p_charge[a_op[i]] != NOCHARGE -> got = p_charge[a_op[i]];
				printf("MODEL: request %d retrieves operation %d's intent, authenticated at the bank: %e\n", i, a_op[i], got)
			:: !p_canceled[a_op[i]] && p_charge[a_op[i]] == NOCHARGE && k_await ->
				cancel(a_op[i], got);
				printf("MODEL: request %d retrieves operation %d's intent, still requires_action past the window, and cancels it: %e\n", i, a_op[i], got)
			:: !p_canceled[a_op[i]] && p_charge[a_op[i]] == NOCHARGE ->
				if
				:: k_exists && !k_finished && k_token == a_tok[i] ->
					k_await = true;
					if
					:: k_lease = 0;
						printf("MODEL: request %d parks operation %d awaiting authentication and hands the key back (202, to the bank)\n", i, a_op[i])
					:: printf("MODEL: request %d parks operation %d awaiting authentication and crashes before it hands the key back\n", i, a_op[i])
					fi
				:: else ->
					printf("MODEL: request %d: its record of the wait finds the key taken over (409 request-superseded)\n", i)
				fi;
				leave(i); goto gone
			fi
#else
			cancel(a_op[i], got);
			printf("MODEL: request %d cancels operation %d's intent, left requires_action: %e\n", i, a_op[i], got)
#endif
		/* A confirm answered processing (perhaps the replay of the first
		 * confirm's answer) is followed by a retrieve of the intent, in the
		 * same step (settleConfirmed): decided, the request finishes as
		 * that; still processing, it leaves without a finish (502 with
		 * Retry-After, stillProcessing): the key stays started with its
		 * token until the lease runs out, for a retry to confirm the stored
		 * intent again or the completer to settle it, and the client is
		 * told nothing final. The first mutation takes the 200 for a
		 * charge; the second takes an intent still processing for one that
		 * charged nothing, as if canceled. */
		:: got == PROCESSING ->
#ifdef MUT_PROCESSING_PAID
			got = SUCCEEDED;
			printf("MODEL: request %d takes operation %d's processing for paid\n", i, a_op[i])
#else
			if
			:: p_proc[a_op[i]] ->
#ifdef MUT_PROCESSING_FINAL
				got = CANCELED;
				printf("MODEL: request %d retrieves operation %d's intent, still processing, and takes it for not completed\n", i, a_op[i])
#else
				printf("MODEL: request %d retrieves operation %d's intent, still processing: it leaves the key started (502, Retry-After)\n", i, a_op[i]);
				leave(i); goto gone
#endif
			:: else -> got = p_charge[a_op[i]];
				printf("MODEL: request %d retrieves operation %d's intent, processing no more: %e\n", i, a_op[i], got)
			fi
#endif
		:: else -> skip
		fi;
		finish(i, got, REQUEST, gen); leave(i); goto gone }
	:: atomic { a_phase[i] == FINISHING -> printf("MODEL: request %d crashes before its finish\n", i); leave(i); goto gone }
	:: atomic { WAITING(i) && !a_stalled[i] ->
		if
		:: k_exists && !k_finished && k_token == a_tok[i] -> k_lease = LEASE; a_fence[i] = FENCE;
			printf("MODEL: request %d renews its lease\n", i)
		:: else ->
			printf("MODEL: request %d: its heartbeat finds the key taken over; stops (409 request-superseded)\n", i);
			leave(i); goto gone
		fi }
#ifndef MUT_NO_FENCE
	:: atomic { WAITING(i) && !a_stalled[i] && a_fence[i] == 0 ->
		printf("MODEL: request %d fences itself before its lease runs out (504); the key stays started\n", i);
		leave(i); goto gone }
#endif
	:: atomic { WAITING(i) && !a_stalled[i] ->
		printf("MODEL: request %d stops waiting (provider timeout, network error or crash)\n", i);
		leave(i); goto gone }
	/* A pause matters only when it holds the fence back: while the fence
	 * has time left, pausing and resuming leaves the state as it was. */
	:: atomic { WAITING(i) && !a_stalled[i] && a_fence[i] == 0 ->
		a_stalled[i] = true;
		printf("MODEL: request %d's process is paused\n", i) }
	:: atomic { a_stalled[i] -> a_stalled[i] = false;
		printf("MODEL: request %d's process resumes\n", i);
		/* An answer that came in during the pause is kept; past its time
		 * the fence fires at once otherwise, and may beat the answer. */
		if
		:: resp[i] != NOCHARGE -> a_phase[i] = FINISHING
		:: a_phase[i] == CREATING && a_fence[i] == 0 ->
			printf("MODEL: request %d's create was answered during the pause\n", i);
			store(i)
		:: resp[i] == NOCHARGE && a_fence[i] > 0 -> skip
#ifndef MUT_NO_FENCE
		:: a_fence[i] == 0 ->
			printf("MODEL: request %d fences itself at once (504); the key stays started\n", i);
			leave(i); goto gone
#else
		:: resp[i] == NOCHARGE && a_fence[i] == 0 -> skip
#endif
		fi }
	od;

gone:	skip
}

/* A settler (the completer, or, in SCA, SettleKey for the shopper's return
 * or the webhook) holds the key it has just taken with a new token, in slot
 * s, and settles the operation's intent at the provider (settleintent), in
 * the step of the takeover. An intent still processing ends the turn at once
 * ("pending"): the key stays started, with the settler's token until its
 * lease runs out, for a later turn or a retry. One whose shopper may still
 * be at their bank (SCA) ends it too, and the key is handed back (Ask and
 * Expire: its lease ends at once, so that the shopper's return or the
 * webhook, which may come any moment, does not find it held), or left to
 * its lease if the settler crashes first. */
inline settle(s, role, got) {
	settleintent(k_op, got, true);
	forget();
	if
	:: got == PROCESSING ->
		printf("MODEL: %e leaves the key started: its intent is processing (pending)\n", role);
		clear(s); got = NOCHARGE; live--; goto end
	:: got == AWAITING ->
		if
		:: k_lease = 0;
			printf("MODEL: %e hands the key back (pending)\n", role)
		:: printf("MODEL: %e crashes before it hands the key back (pending)\n", role)
		fi;
		clear(s); got = NOCHARGE; live--; goto end
	:: else -> skip
	fi
}

/* Then, in a step of its own, the finish the request would have made, or a
 * crash before it, which leaves the key to a later turn or a retry. */
inline settlerfinish(s, role, got) {
	if
	:: atomic { finish(s, got, role, 0); clear(s); got = NOCHARGE; live-- }
	:: atomic { printf("MODEL: %e crashes before its finish\n", role); clear(s); got = NOCHARGE; live-- }
	fi
}

/* The completer, pass after pass (each instance runs one every
 * COMPLETER_INTERVAL): TakeStuck (a started key whose lease ran out, past its
 * grace, taken over with a new token), then settle and settlerfinish. */
proctype Completer() {
	mtype got = NOCHARGE;
end:	do
	:: atomic { !over && k_exists && !k_finished && k_lease == 0 && k_age >= GRACE ->
		live++;
		newtoken(); k_lease = LEASE;
		a_phase[COMP] = FINISHING; a_tok[COMP] = k_token; a_op[COMP] = k_op;
		printf("MODEL: completer takes the key over (token %d)\n", k_token);
		settle(COMP, COMPLETER, got)
	}
		settlerfinish(COMP, COMPLETER, got)
	od
}

/* SettleKey (SCA): the key settled now, as the completer's pass would, by
 * the shopper back from their bank (GET /checkout/return) or by the
 * provider's webhook of the bank's decision (settleAwaiting, which finds the
 * key awaiting authentication by the intent's id). TakeStuckKey takes the
 * key with a new token when it is started and its lease has run out,
 * without the grace; a key held, finished or gone is left as it is (409 in
 * progress, or not found: the status page shows what is stored), which is
 * the same as a return or a webhook that never came, so only a SettleKey
 * that takes the key is a step. Up to RETURNS returns (the bank's redirect,
 * a second submission, a reload) once the shopper has been sent to the
 * bank, at any time, or none (the way back lost); the webhook once after
 * the bank's decision, late, or never. The mutation lets the return settle
 * without TakeStuckKey: no new token and no lease of its own, its writes
 * fenced by the token it found on the key. */
#ifdef MUT_SETTLE_NO_FENCE
#define RETURN_TAKES (k_exists && !k_finished)
#else
#define RETURN_TAKES (k_exists && !k_finished && k_lease == 0)
#endif
#define HOOK_TAKES (k_exists && !k_finished && k_lease == 0 && k_hasid && k_op == hookop)

proctype SettleKey(byte s; mtype role) {
	mtype got = NOCHARGE;
end:	do
	:: atomic { !over && k_await && (role == RETURN && returns > 0 && RETURN_TAKES || role == WEBHOOK && hookop != 0 && HOOK_TAKES) ->
		live++;
		if
		:: role == RETURN -> returns--
		:: else -> hookop = 0
		fi;
#ifdef MUT_SETTLE_NO_FENCE
		if
		:: role == RETURN -> a_tok[s] = k_token;
			printf("MODEL: the shopper's return settles the key without taking it (token %d, lease left %d)\n", k_token, k_lease)
		:: else -> newtoken(); k_lease = LEASE; a_tok[s] = k_token;
			printf("MODEL: %e takes the key (TakeStuckKey, token %d)\n", role, k_token)
		fi;
#else
		newtoken(); k_lease = LEASE; a_tok[s] = k_token;
		printf("MODEL: %e takes the key (TakeStuckKey, token %d)\n", role, k_token);
#endif
		a_phase[s] = FINISHING; a_op[s] = k_op;
		settle(s, role, got)
	}
		settlerfinish(s, role, got)
	od
}

/* The reconciler, and the webhook handler on payment_intent.succeeded: a
 * succeeded intent that no order holds, whose key is finished (MatchIntent),
 * is refunded (Refund under RefundKey, then RecordRefund). */
#define ORPHAN(o) (p_charge[o] == SUCCEEDED && !p_refunded[o] && orders[o] == 0 && \
	k_exists && k_op == o && k_finished)

proctype Reconciler() {
	byte o;
end:	do
	:: atomic { !over && ORPHAN(1) -> o = 1 }
		atomic { p_refunded[o] = true; printf("MODEL: reconciler refunds the charge of operation %d\n", o); o = 0 }
	:: atomic { !over && ORPHAN(2) -> o = 2 }
		atomic { p_refunded[o] = true; printf("MODEL: reconciler refunds the charge of operation %d\n", o); o = 0 }
	od
}

/* The sweeper deletes a finished key older than the retention (Sweep). The
 * mutation selects by age alone, started keys included. */
#ifdef MUT_SWEEP_STARTED
#define SWEEPABLE (k_exists && k_age > RETAIN)
#else
#define SWEEPABLE (k_exists && k_finished && k_finage > RETAIN)
#endif

proctype Sweeper() {
end:	do
	:: atomic { !over && SWEEPABLE ->
		printf("MODEL: sweeper deletes the key (operation %d)\n", k_op);
		check(k_finished, NEVER_SWEPT_STARTED);
		firstans[k_op] = NOANSWER; firstansop[k_op] = 0;  /* nothing reads them once the row is gone */
		k_exists = false; k_finished = false; k_op = 0; k_token = 0; k_lease = 0; k_age = 0;
		k_finage = 0; k_ans = NOANSWER; k_ansop = 0; k_hasid = false; swept = true }
	od
}

/* Quiescence: every attempt has ended and the faults have stopped. Every
 * lock runs out and every grace passes; the confirms still on the wire land
 * before the completer's last pass or after it; time passes, so the
 * provider decides every intent left processing (either way) before the
 * last pass, which therefore finishes; the completer settles a key left
 * started; the reconciler refunds what no order holds. Then every
 * succeeded charge must have an order or a refund. */
inline landslot(j, lo) {
	if
	:: wire[j] && wireop[j] == lo -> land(j)
	:: else -> skip
	fi
}
inline landall(lo) {
	landslot(0, lo); landslot(1, lo); landslot(2, lo); landslot(3, lo); landslot(4, lo)
}

inline decideslot(d) {
	if
	:: p_proc[d] -> decide(d)
	:: else -> skip
	fi
}

inline settled(so) {
	if
	:: p_charge[so] == SUCCEEDED -> check((orders[so] > 0) != p_refunded[so], CHARGE_HAS_ORDER_OR_REFUND)
	:: else -> skip
	fi
}

init {
	byte o;
	mtype r = NOCHARGE;
	mtype got = NOCHARGE;

	atomic {
		run Clock(); run Provider(); run Reconciler(); run Sweeper();
		run Request(0, 1, Y); run Request(1, 1, X);  /* the first purchase */
#if defined(LONG)
		run Request(2, 1, X);
#elif defined(SCA)
		run Bank(); run SettleKey(RET, RETURN); run SettleKey(HOOK, WEBHOOK);
#else
		run Request(3, 2, X); run Request(4, 2, Y);  /* the second */
#endif
		run Completer()
	}

	atomic {
		live == 0;
		printf("MODEL: quiescence: the faults stop and time passes\n");
		if
		:: landall(1)
		:: skip
		fi;
		if
		:: landall(2)
		:: skip
		fi;
		decideslot(1); decideslot(2);
		if
		:: k_exists && !k_finished ->
			newtoken(); a_tok[COMP] = k_token; a_op[COMP] = k_op;
			printf("MODEL: completer's last pass\n");
			settleintent(k_op, got, false);
			finish(COMP, got, COMPLETER, 0);
			clear(COMP)
		:: else -> skip
		fi;
		landall(1); landall(2);
		/* An intent made processing by a confirm landing only now: the
		 * searches of the model itself find none (every confirm still on
		 * the wire finds its intent decided or canceled), but a mutation
		 * may make one. */
		decideslot(1); decideslot(2);
		if
		:: ORPHAN(1) -> p_refunded[1] = true; printf("MODEL: reconciler refunds the charge of operation 1\n")
		:: else -> skip
		fi;
		if
		:: ORPHAN(2) -> p_refunded[2] = true; printf("MODEL: reconciler refunds the charge of operation 2\n")
		:: else -> skip
		fi;
		settled(1); settled(2);
		over = true
	}
}
