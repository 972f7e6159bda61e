// canasta-scan page: a thin client of the same REST API a third party would use.
// Views are chosen by the URL hash (#game/ID, #game/ID/deal/ID); games this phone has
// started are remembered (id + token) in localStorage, since the token is the only key.
"use strict";

const RANKS = ["A", "K", "Q", "J", "10", "9", "8", "7", "6", "5", "4", "2", "JK", "3R", "3B"];
const $ = (sel) => document.querySelector(sel);
const state = { game: null, token: null, deal: null, editor: null, seq: 1, lowIds: new Set() };

// ---- storage and API -------------------------------------------------------------

function savedGames() {
  try { return JSON.parse(localStorage.getItem("canasta-games") || "[]"); } catch { return []; }
}
function rememberGame(game, token) {
  const games = savedGames().filter((g) => g.id !== game.id);
  games.unshift({ id: game.id, token, name: game.teams.map((t) => t.name).join(" vs ") });
  localStorage.setItem("canasta-games", JSON.stringify(games.slice(0, 20)));
}
function tokenFor(id) {
  const g = savedGames().find((x) => x.id === id);
  return g ? g.token : null;
}

async function api(method, path, body) {
  const headers = {};
  if (state.token) headers.Authorization = `Bearer ${state.token}`;
  const init = { method, headers };
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) { headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
  const res = await fetch(path, init);
  if (!res.ok) {
    let detail = `${res.status} ${res.statusText}`;
    try { const j = await res.json(); if (j.detail) detail = typeof j.detail === "string" ? j.detail : JSON.stringify(j.detail); } catch { /* not JSON */ }
    const err = new Error(detail); err.status = res.status; throw err;
  }
  if (res.status === 204) return null;
  const type = res.headers.get("content-type") || "";
  return type.includes("json") ? res.json() : res.blob();
}

async function busy(label, fn) {
  $("#busy").textContent = label; $("#busy").hidden = false; $("#error").hidden = true;
  try { return await fn(); } catch (err) { showError(err.message); return undefined; } finally { $("#busy").hidden = true; }
}
function showError(msg) { const e = $("#error"); e.textContent = msg; e.hidden = false; window.scrollTo(0, 0); }

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}
function show(view) { for (const v of ["start", "game", "deal"]) $(`#view-${v}`).hidden = v !== view; }

// ---- routing ---------------------------------------------------------------------

async function route() {
  $("#error").hidden = true;
  // A link shared by another phone carries the token in the fragment (never sent to the server).
  const join = location.hash.match(/^#join\/(\d+)\/([\w-]+)$/);
  if (join) {
    state.token = join[2];
    const game = await busy("Joining…", () => api("GET", `/api/games/${join[1]}`));
    if (game) { rememberGame(game, join[2]); location.replace(`#game/${game.id}`); }
    return;
  }
  const m = location.hash.match(/^#game\/(\d+)(?:\/deal\/(\d+))?/);
  if (!m) { state.game = null; state.token = null; $("#game-title").textContent = ""; renderStart(); return; }
  const gameId = Number(m[1]);
  state.token = tokenFor(gameId);
  if (!state.token) { showError("This phone does not have the token of that game."); renderStart(); return; }
  const game = await busy("Loading…", () => api("GET", `/api/games/${gameId}`));
  if (!game) return;
  state.game = game;
  $("#game-title").textContent = game.teams.map((t) => t.name).join(" vs ");
  if (m[2]) {
    const deal = await busy("Loading deal…", () => api("GET", `/api/games/${gameId}/deals/${m[2]}`));
    if (deal) { state.editor = null; state.seq = deal.photos.length ? deal.photos[deal.photos.length - 1].seq : 1; await renderDeal(deal); }
  } else renderGame();
}

// ---- start -----------------------------------------------------------------------

function renderStart() {
  show("start");
  const games = savedGames();
  $("#saved-games").hidden = games.length === 0;
  $("#saved-list").replaceChildren(...games.map((g) =>
    el("li", {}, el("a", { href: `#game/${g.id}` }, `Game ${g.id}: ${g.name}`))));
}

$("#new-game").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const f = new FormData(ev.target);
  const body = {
    players: Number(f.get("players")), target: Number(f.get("target")),
    teams: [0, 1, 2].filter((i) => i < 2 || f.get("team2").trim())
      .map((i) => ({ name: f.get(`team${i}`).trim(), starting_total: Number(f.get(`start${i}`) || 0) })),
  };
  const game = await busy("Starting…", () => api("POST", "/api/games", body));
  if (!game) return;
  rememberGame(game, game.token);
  location.hash = `#game/${game.id}`;
});

// ---- game ------------------------------------------------------------------------

function renderGame() {
  show("game");
  const g = state.game;
  $("#winner").hidden = !g.game_over;
  $("#winner").textContent = g.game_over ? `${g.winner} wins the game!` : "";
  $("#scoreboard").replaceChildren(...g.teams.map((t) => el("div", { class: `team-score t${t.index}`, "data-team": t.index },
    el("div", {}, el("strong", {}, t.name), t.players.length ? el("span", { class: "muted" }, ` (${t.players.join(", ")})`) : ""),
    el("div", { class: "total", "data-testid": `total-${t.index}` }, t.total),
    el("div", { class: "progress", title: `${t.total} of ${g.target}` }, el("div", { style: `width:${Math.min(100, t.progress * 100)}%` })),
    el("div", { class: "muted" }, `${Math.max(0, g.target - t.total)} to go · next first meld ${t.next_minimum_meld}`))));
  $("#share").onclick = async () => {
    const link = `${location.origin}${location.pathname}#join/${g.id}/${state.token}`;
    try { await navigator.clipboard.writeText(link); $("#share-link").textContent = "Link copied: open it on another phone."; }
    catch { $("#share-link").textContent = link; }
  };
  $("#photo-input").disabled = g.game_over;
  $("#manual-deal").disabled = g.game_over;
  const head = el("tr", {}, el("th", {}, "Deal"), ...g.teams.map((t) => el("th", {}, t.name)), el("th", {}, ""));
  $("#history thead").replaceChildren(head);
  $("#history tbody").replaceChildren(...g.deals.map((d) => el("tr", { onclick: () => { location.hash = `#game/${g.id}/deal/${d.id}`; } },
    el("td", {}, `#${d.number}`),
    ...g.teams.map((t, i) => el("td", {}, d.deal_scores ? `${signed(d.deal_scores[i])} → ${d.totals_after[i]}` : "")),
    el("td", {}, el("span", { class: `badge ${d.status}` }, d.status)))));
  $("#no-deals").hidden = g.deals.length > 0;
}
const signed = (n) => (n > 0 ? `+${n}` : `${n}`);

$("#photo-input").addEventListener("change", async (ev) => {
  const file = ev.target.files[0];
  ev.target.value = "";
  if (!file) return;
  const form = new FormData(); form.append("photo", file);
  const deal = await busy("Reading the cards…", () => api("POST", `/api/games/${state.game.id}/deals`, form));
  if (deal) location.hash = `#game/${state.game.id}/deal/${deal.id}`;
});
$("#manual-deal").addEventListener("click", async () => {
  const deal = await busy("New deal…", () => api("POST", `/api/games/${state.game.id}/deals`));
  if (deal) location.hash = `#game/${state.game.id}/deal/${deal.id}`;
});

// ---- deal ------------------------------------------------------------------------

const dealUrl = (path = "") => `/api/games/${state.game.id}/deals/${state.deal.id}${path}`;
const teamName = (i) => state.game.teams[i].name;

async function change(label, method, path, body) {
  const deal = await busy(label, () => api(method, dealUrl(path), body));
  if (deal) await renderDeal(deal);
  return deal;
}
function correct(op) { return change("Saving…", "POST", "/corrections", { ...op, version: state.deal.version }); }

function allCards(table) {
  const out = [];
  table.teams.forEach((team, t) => {
    team.melds.forEach((meld, m) => meld.cards.forEach((c) => out.push({ card: c, team: t, meld, where: `meld ${m + 1}` })));
    team.red_threes.forEach((c) => out.push({ card: c, team: t, meld: null, where: "red threes" }));
  });
  table.unplaced.forEach((c) => out.push({ card: c, team: null, meld: null, where: "not counted" }));
  return out;
}
// cards the server lists as read with low confidence (its threshold, one place)
const isLow = (c) => state.lowIds.has(c.id);

async function renderDeal(deal) {
  show("deal");
  state.deal = deal;
  state.lowIds = new Set(deal.review.filter((r) => r.kind === "low_confidence").map((r) => r.card_id));
  const confirmed = deal.status === "confirmed";
  $("#deal-title").textContent = `Deal ${deal.number}`;
  $("#deal-status").textContent = deal.status;
  $("#deal-status").className = `badge ${deal.status}`;
  renderProblems(deal);
  await renderPhoto(deal);
  renderTeams(deal);
  renderEditor();
  renderOutcome(deal);
  renderBreakdown(deal);
  $("#undo").hidden = confirmed || deal.corrections.length === 0;
  $("#confirm").hidden = confirmed;
  $("#confirm").disabled = !!deal.problem;
  $("#reopen").hidden = !confirmed;
}

function renderProblems(deal) {
  const box = $("#problems");
  box.replaceChildren();
  if (deal.problem) {
    const items = deal.problem.violations && deal.problem.violations.length ? deal.problem.violations : [deal.problem];
    box.append(el("div", { class: "problem", "data-testid": "problem" }, el("strong", {}, "Does not score yet: "),
      el("ul", {}, ...items.map((v) => el("li", {}, v.detail)))));
  }
  if (deal.review.length && deal.status === "draft") {
    box.append(el("div", { class: "review" }, el("strong", {}, "Check these first: "),
      ...deal.review.map((r) => el("button", { type: "button", onclick: () => select(r.card_id) },
        `${r.card}${r.confidence !== null ? ` (${Math.round(r.confidence * 100)}%)` : ""} · ${r.reason}`))));
  }
  const latest = deal.scans[deal.scans.length - 1];
  const notes = (latest && latest.review) || [];
  if (notes.length && deal.status === "draft") {
    box.append(el("details", { class: "review" }, el("summary", {}, `The scanner's notes on photo ${latest.seq} (${notes.length})`),
      el("ul", {}, ...notes.map((n) => el("li", {}, n.message || n.kind)))));
  }
}

let photoUrl = null;
async function renderPhoto(deal) {
  const has = deal.photos.length > 0;
  $("#photo-wrap").hidden = !has;
  $("#photo-tools").hidden = deal.status !== "draft" && !has;
  const pick = $("#photo-pick");
  pick.replaceChildren(...deal.photos.map((p) => el("option", { value: p.seq, selected: p.seq === state.seq }, `Photo ${p.seq}`)));
  pick.hidden = deal.photos.length < 2;
  $("#rescan-team").replaceChildren(el("option", { value: "" }, "whole table"),
    ...state.game.teams.map((t) => el("option", { value: t.index }, `only ${t.name}`)));
  for (const n of document.querySelectorAll("#photo-tools .button, #rescan-team")) n.hidden = deal.status !== "draft";
  if (!has) return;
  const photo = deal.photos.find((p) => p.seq === state.seq) || deal.photos[deal.photos.length - 1];
  state.seq = photo.seq;
  const img = $("#photo");
  if (img.dataset.src !== photo.view_url) {
    const blob = await api("GET", photo.view_url);
    if (photoUrl) URL.revokeObjectURL(photoUrl);
    photoUrl = URL.createObjectURL(blob);
    img.src = photoUrl; img.dataset.src = photo.view_url;
  }
  const svg = $("#boxes");
  svg.setAttribute("viewBox", `0 0 ${photo.width} ${photo.height}`);
  const ns = "http://www.w3.org/2000/svg";
  svg.replaceChildren();
  const fontSize = Math.max(14, photo.width / 60);
  for (const { card, team } of allCards(deal.table)) {
    if (card.scan !== photo.seq || !card.box) continue;
    const [x1, y1, x2, y2] = card.box;
    const rect = document.createElementNS(ns, "rect");
    const cls = [team === null ? "unplaced" : `t${team}`, isLow(card) ? "low" : "", state.editor && state.editor.cardId === card.id ? "selected" : ""];
    rect.setAttribute("class", cls.join(" "));
    Object.entries({ x: x1, y: y1, width: x2 - x1, height: y2 - y1, "data-card-id": card.id }).forEach(([k, v]) => rect.setAttribute(k, v));
    rect.addEventListener("click", () => select(card.id));
    const label = document.createElementNS(ns, "text");
    label.setAttribute("x", x1); label.setAttribute("y", Math.max(fontSize, y1 - 4));
    label.setAttribute("style", `font-size:${fontSize}px`);
    label.textContent = card.card + (isLow(card) ? "?" : "");
    svg.append(rect, label);
  }
}

function chip(card) {
  const sel = state.editor && state.editor.cardId === card.id;
  return el("button", { type: "button", class: `chip${isLow(card) ? " low" : ""}${card.corrected ? " corrected" : ""}${sel ? " selected" : ""}`,
    "data-card-id": card.id, title: card.confidence !== null ? `read with ${Math.round(card.confidence * 100)}% confidence` : "entered by hand",
    onclick: () => select(card.id) }, card.card);
}

function renderTeams(deal) {
  // melds the scanner may have miscounted (until a correction touches them or they are checked)
  const toCount = new Set(deal.review.filter((r) => r.kind === "count_meld").map((r) => r.meld));
  $("#teams").replaceChildren(...deal.table.teams.map((team, t) => {
    const block = el("div", { class: `card team-block t${t}`, "data-team": t }, el("h3", {}, teamName(t)));
    team.melds.forEach((meld) => {
      const unsure = toCount.has(meld.id) && deal.status === "draft";
      const row = el("div", { class: `meld${unsure ? " to-count" : ""}`, "data-meld-id": meld.id,
        title: unsure ? `the scanner may have miscounted this meld (${Math.round(meld.confidence * 100)}% sure): count its cards` : null });
      const chips = el("div", { class: "chips" });
      if (meld.squared) {
        const s = meld.squared;
        chips.append(el("span", { class: "squared" }, `Squared canasta: ${s.naturals} × ${s.rank}${s.wilds.length ? " + " + s.wilds.join(" ") : ""}`));
      }
      chips.append(...meld.cards.map(chip));
      const tools = el("div", { class: "meld-tools" },
        el("button", { type: "button", title: "add a card to this meld", onclick: () => openAdd(t, meld.id) }, "+ card"));
      if (meld.squared) tools.append(el("button", { type: "button", onclick: () => correct({ op: "unsquare", meld: meld.id }) }, "not squared"));
      else tools.append(el("button", { type: "button", onclick: () => openSquare(t, meld.id) }, "squared…"));
      if (unsure) tools.append(el("button", { type: "button", "data-testid": "counted", title: "the cards shown are the meld's cards",
        onclick: () => correct({ op: "check", meld: meld.id }) }, "counted ✓"));
      row.append(chips, tools);
      block.append(row);
    });
    block.append(el("div", { class: "meld" }, el("span", {}, "Red threes: "),
      el("div", { class: "chips" }, ...team.red_threes.map(chip)),
      el("div", { class: "meld-tools" }, el("button", { type: "button", onclick: () => correct({ op: "add", card: "3R", team: t, meld: "red_threes" }) }, "+ red three"))));
    block.append(el("div", { class: "row" },
      el("button", { type: "button", onclick: () => openAdd(t, "new") }, "+ new meld"),
      el("button", { type: "button", onclick: () => openSquare(t, "new") }, "+ squared canasta")));
    return block;
  }), ...(deal.table.unplaced.length ? [el("div", { class: "card" }, el("h3", {}, "Seen but not counted"),
    el("p", { class: "muted" }, "Draw pile, discards or cards the scanner could not place. Tap one to move it into a meld."),
    el("div", { class: "chips" }, ...deal.table.unplaced.map(chip)))] : []));
}

// The editor: change a card's rank, move or delete it; or pick the rank of a card to add.
function select(cardId) { state.editor = { mode: "edit", cardId }; renderDeal(state.deal); $("#editor").scrollIntoView({ block: "nearest" }); }
function openAdd(team, meld) { state.editor = { mode: "add", team, meld }; renderDeal(state.deal); $("#editor").scrollIntoView({ block: "nearest" }); }
function openSquare(team, meld) { state.editor = { mode: "square", team, meld }; renderDeal(state.deal); $("#editor").scrollIntoView({ block: "nearest" }); }

function renderEditor() {
  const ed = state.editor;
  const box = $("#editor");
  box.hidden = !ed;
  if (!ed) return;
  const found = ed.mode === "edit" ? allCards(state.deal.table).find((x) => x.card.id === ed.cardId) : null;
  if (ed.mode === "edit" && !found) { state.editor = null; box.hidden = true; return; }
  const grid = $("#rank-grid");
  grid.className = ed.mode === "square" ? "rank-grid square" : "rank-grid";
  const moveRow = $("#move-to").closest(".row");
  moveRow.hidden = ed.mode !== "edit";
  if (ed.mode === "edit") {
    $("#editor-card").textContent = `${found.card.card} (${found.team === null ? "not counted" : teamName(found.team) + ", " + found.where}) — tap its rank:`;
    grid.replaceChildren(...RANKS.map((r) => el("button", { type: "button", "data-rank": r, onclick: () => correct({ op: "set_card", card_id: ed.cardId, card: r }) }, r)));
    const options = [];
    state.deal.table.teams.forEach((team, t) => {
      team.melds.forEach((m, i) => options.push([m.id, `${teamName(t)}: meld ${i + 1} (${m.squared ? "squared " + m.squared.rank : m.cards.map((c) => c.card).join(" ")})`]));
      options.push([`new:${t}`, `${teamName(t)}: a new meld`], [`red_threes:${t}`, `${teamName(t)}: red threes`]);
    });
    options.push(["unplaced", "Not counted"]);
    $("#move-to").replaceChildren(...options.map(([v, label]) => el("option", { value: v }, label)));
  } else if (ed.mode === "add") {
    $("#editor-card").textContent = `to add to ${teamName(ed.team)}${ed.meld === "new" ? " (a new meld)" : ""} — tap its rank:`;
    grid.replaceChildren(...RANKS.map((r) => el("button", { type: "button", "data-rank": r, onclick: () => correct({ op: "add", card: r, team: ed.team, meld: ed.meld }) }, r)));
  } else {
    $("#editor-card").textContent = `squared canasta for ${teamName(ed.team)}`;
    const rank = el("select", { id: "sq-rank" }, ...RANKS.slice(0, 11).map((r) => el("option", {}, r)));
    const naturals = el("input", { id: "sq-naturals", type: "number", min: 0, max: 24, value: 7, inputmode: "numeric" });
    const wilds = el("input", { id: "sq-wilds", placeholder: "wilds, e.g. 2 JK" });
    grid.replaceChildren(el("label", {}, "Rank ", rank), el("label", {}, "Naturals ", naturals), el("label", {}, "Wilds ", wilds),
      el("button", { type: "button", class: "primary", onclick: async () => {
        const done = await correct({ op: "square", team: ed.team, meld: ed.meld, rank: rank.value,
          naturals: Number(naturals.value), wilds: wilds.value.split(/[\s,]+/).filter(Boolean) });
        if (done) { state.editor = null; renderDeal(state.deal); }
      } }, "Count it"));
  }
}
$("#editor-close").addEventListener("click", () => { state.editor = null; renderDeal(state.deal); });
$("#delete-card").addEventListener("click", () => { const id = state.editor.cardId; state.editor = null; correct({ op: "delete", card_id: id }); });
$("#move-card").addEventListener("click", () => {
  const v = $("#move-to").value;
  const [meld, team] = v.includes(":") ? v.split(":") : [v, null];
  const op = { op: "move", card_id: state.editor.cardId, meld };
  if (team !== null) op.team = Number(team);
  correct(op);
});

function renderOutcome(deal) {
  const box = $("#outcome");
  box.replaceChildren(...deal.outcome.teams.map((o, t) => {
    const handText = o.hand_points !== null && o.hand_points !== undefined ? "" : (o.hand || []).join(" ");
    return el("div", { class: "outcome-team", "data-team": t },
      el("strong", {}, teamName(t)),
      el("div", { class: "row" },
        el("label", {}, el("span", {}, el("input", { type: "radio", name: "went-out", value: t, checked: o.went_out }), " went out")),
        el("label", {}, el("span", {}, el("input", { type: "checkbox", class: "concealed", checked: o.concealed }), " concealed"))),
      el("div", { class: "row" },
        el("label", {}, "Cards left in hand", el("input", { class: "hand", value: handText, placeholder: "e.g. Q 4 2 JK", autocapitalize: "characters" })),
        el("label", {}, "or their points", el("input", { class: "hand-points", type: "number", min: 0, inputmode: "numeric", value: o.hand_points ?? "" }))));
  }), el("label", {}, el("span", {}, el("input", { type: "radio", name: "went-out", value: "none", checked: !deal.outcome.teams.some((o) => o.went_out) }), " nobody went out (stock ran out)")));
}
$("#save-outcome").addEventListener("click", () => {
  const wentOut = (document.querySelector("input[name=went-out]:checked") || {}).value;
  const teams = [...document.querySelectorAll(".outcome-team")].map((row, t) => {
    const points = row.querySelector(".hand-points").value.trim();
    const hand = row.querySelector(".hand").value.trim().split(/[\s,]+/).filter(Boolean);
    return { went_out: String(t) === wentOut, concealed: row.querySelector(".concealed").checked,
      ...(points !== "" ? { hand_points: Number(points) } : { hand }) };
  });
  change("Saving…", "PUT", "/outcome", { teams, version: state.deal.version });
});

function renderBreakdown(deal) {
  const s = deal.score;
  $("#score-title").textContent = deal.status === "confirmed" ? "Score" : "Score if confirmed now";
  const table = $("#breakdown");
  if (!s) { table.replaceChildren(el("tr", {}, el("td", {}, "—"))); return; }
  const rows = [["Cards in melds", "card_points"], ["Canastas", "canasta_bonus"], ["Red threes", "red_three_bonus"],
    ["Going out", "going_out_bonus"], ["Left in hand", "hand_penalty"], ["Deal", "deal_score", "sum"],
    ["Game total", "total_after", "sum"], ["Next first meld", "next_minimum_meld"]];
  table.replaceChildren(el("tr", {}, el("th", {}, ""), ...s.teams.map((t) => el("th", {}, t.name))),
    ...rows.map(([label, key, cls]) => el("tr", { class: cls || "" }, el("th", {}, label),
      ...s.teams.map((t, i) => el("td", { "data-testid": `${key}-${i}` }, t[key])))));
  if (s.game_over) table.append(el("tr", { class: "sum" }, el("th", {}, "Winner"), el("td", { colspan: s.teams.length }, s.winner)));
}

$("#undo").addEventListener("click", () => change("Undoing…", "DELETE", `/corrections/last?version=${state.deal.version}`));
$("#confirm").addEventListener("click", async () => {
  const deal = await change("Confirming…", "POST", "/confirm", { version: state.deal.version });
  if (deal) location.hash = `#game/${state.game.id}`;
});
$("#reopen").addEventListener("click", () => change("Reopening…", "POST", "/reopen", { version: state.deal.version }));
$("#delete-deal").addEventListener("click", async () => {
  if (!confirm(`Delete deal ${state.deal.number}?`)) return;
  const done = await busy("Deleting…", () => api("DELETE", dealUrl(`?version=${state.deal.version}`)));
  if (done !== undefined) location.hash = `#game/${state.game.id}`;
});
$("#back-to-game").addEventListener("click", () => { location.hash = `#game/${state.game.id}`; });
$("#photo-pick").addEventListener("change", (ev) => { state.seq = Number(ev.target.value); renderDeal(state.deal); });
$("#rescan-input").addEventListener("change", async (ev) => {
  const file = ev.target.files[0];
  ev.target.value = "";
  if (!file) return;
  const form = new FormData(); form.append("photo", file);
  const team = $("#rescan-team").value;
  if (team !== "") form.append("team", team);
  state.seq = Math.max(0, ...state.deal.photos.map((p) => p.seq)) + 1;
  await change("Reading the cards…", "POST", "/photos", form);
});

window.addEventListener("hashchange", route);
route();
