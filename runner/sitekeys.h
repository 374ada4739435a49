/* cudavision-run: the config's keys as tables, one a group kind ([runner], [camera NAME]: runner/
 * siteconfig.cpp holds them and reads the file through them). A key is its name, its type, its
 * default, the check of its value and the field of the group's struct that it fills, given by
 * member pointers: a key of one type over a field of another does not compile (docs/fleet.md,
 * "Keys").
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <string>

namespace cuvrun {

/* What a key's text must be, and what its field holds */
enum class KeyType {
  kText,   /* a string, not empty, GKeyFile's escapes (\s \t \n \r \\) undone */
  kNumber, /* an int from lo to hi, written in decimal and nothing after it (not a space) */
  kFlag,   /* a bool: true, false, 1 or 0 */
  kChoice, /* a bool: one of two words, yes (true) or no (false) */
  /* a string, the path of a regular file that reads at once, of at most 16 MiB; secret: one of the
   * runner's own (a camera's password file may not be it) */
  kTlsFile,
  /* a string, the password on the first line of the file the key names: without the key, the
   * environment variable env's, and the file is one of the runner's own secrets */
  kPasswordFile,
  /* the same for a camera, whose password goes to whatever its URI names: the file lies in a folder
   * the site gave for cameras' passwords and is none of the runner's secrets; no environment */
  kCameraPasswordFile,
};

/* A check of a value alone (runner/sitechecks.h): false with @why, the error's text. */
using ValueCheck = bool (*) (const std::string &value, std::string *why);

/* One key of a group whose values fill a struct G. */
template <typename G> struct Key {
  const char *name = nullptr;
  KeyType type = KeyType::kText;
  /* its field, the one of its type's */
  std::string &(*text) (G &) = nullptr;
  int &(*number) (G &) = nullptr;
  bool &(*flag) (G &) = nullptr;
  /* what the field holds where the key is not written */
  bool required = false; /* kText: none, the key must be written */
  const char *text_default = "";
  int number_default = 0;
  bool flag_default = false;
  const char *env = nullptr; /* kPasswordFile */
  int lo = 0, hi = 0;                        /* kNumber */
  const char *yes = nullptr, *no = nullptr;  /* kChoice */
  ValueCheck check = nullptr;                /* kText */
  bool secret = false;                       /* kTlsFile */
};

namespace detail {
template <typename M> struct ClassOf;
template <typename C, typename M> struct ClassOf<M C::*> {
  using type = C;
};
}  // namespace detail

/* The field that member pointers lead to from a group's struct (&RunnerConfig::broker,
 * &BrokerConfig::port): a key takes &at<...> as a function that returns its field, by reference of
 * the field's own type. */
template <auto First, auto... Rest>
constexpr auto &at (typename detail::ClassOf<decltype (First)>::type &group)
{
  return ((group .* First) .* ... .* Rest);
}

template <typename G> constexpr Key<G> text_key (const char *name, std::string &(*field) (G &), const char *def,
    ValueCheck check = nullptr)
{
  Key<G> k;
  k.name = name;
  k.text = field;
  k.text_default = def;
  k.check = check;
  return k;
}

template <typename G> constexpr Key<G> required_key (const char *name, std::string &(*field) (G &),
    ValueCheck check = nullptr)
{
  Key<G> k = text_key (name, field, "", check);
  k.required = true;
  return k;
}

template <typename G> constexpr Key<G> number_key (const char *name, int &(*field) (G &), int def, int lo, int hi)
{
  Key<G> k;
  k.name = name;
  k.type = KeyType::kNumber;
  k.number = field;
  k.number_default = def;
  k.lo = lo;
  k.hi = hi;
  return k;
}

template <typename G> constexpr Key<G> flag_key (const char *name, bool &(*field) (G &), bool def)
{
  Key<G> k;
  k.name = name;
  k.type = KeyType::kFlag;
  k.flag = field;
  k.flag_default = def;
  return k;
}

template <typename G> constexpr Key<G> choice_key (const char *name, bool &(*field) (G &), const char *yes,
    const char *no, bool def)
{
  Key<G> k = flag_key (name, field, def);
  k.type = KeyType::kChoice;
  k.yes = yes;
  k.no = no;
  return k;
}

template <typename G> constexpr Key<G> tls_file_key (const char *name, std::string &(*field) (G &), bool secret)
{
  Key<G> k = text_key (name, field, "");
  k.type = KeyType::kTlsFile;
  k.secret = secret;
  return k;
}

template <typename G> constexpr Key<G> password_file_key (const char *name, std::string &(*field) (G &), const char *env)
{
  Key<G> k = text_key (name, field, "");
  k.type = KeyType::kPasswordFile;
  k.env = env;
  return k;
}

template <typename G> constexpr Key<G> camera_password_file_key (const char *name, std::string &(*field) (G &))
{
  Key<G> k = text_key (name, field, "");
  k.type = KeyType::kCameraPasswordFile;
  return k;
}

}  // namespace cuvrun
